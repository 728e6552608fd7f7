"""The progressive's wire shapes, each declared once as a strict pydantic model (`core.wire`), one
module per section. Nothing is re-exported here: each name is imported from its section.

- common: money, ids, pages, a note, the second person's code, an enum sent as text, and the
  query strings' ids, offsets and times;
- meter: the meter as terminals and signs read it, and what a jackpot sign shows;
- awards: an award, its steps, the winner's identity and register, and the award list's query;
- journal: the journal's transfers and events, its query string, and its verification;
- pools: a pool's configuration and report, and its progressive paytable;
- changes: a pool's parameter changes and status changes, and their query string;
- corrections: a pool's documented corrections, their page and query string;
- exports: a background export's request and job;
- notifications: the significant events and the webhook deliveries, and their query strings;
- liability: the period-end liability's query string and answer;
- code: which code runs: the approved and installed digests and the gate's last check;
- render: awards, changes, export jobs, verifications and deliveries as the API shows them.

The views read requests with these models and the schema documents them. Answers are built from
them too, with `model_construct` and dumped with `model_dump(mode="json")`.
"""
