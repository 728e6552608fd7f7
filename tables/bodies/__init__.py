"""The tables' wire shapes, each declared once as a strict pydantic model (`core.wire`), one
module per concern, and the readers that turn a round's bodies into the domain's requests.

- vocabulary: the words every round shape is made of (round id, seat, card, stake, hand category);
- seats: a seat's bets, decisions and plays as posted, and its settlement as answered;
- round_requests: an open, a result and a void as posted, their readers and the domain requests;
- round_answers: what an open, a result and a void answer;
- round_reads: a round as stored, and a table's rounds listed;
- administration: tables and terminal tokens as their administration sees them;
- integrity: integrity flags listed, and the void watch;
- reconciliation: reconciliation reports;
- history: a pool's history for auditors, one row model per chart;
- registers: the session registers, models 8 and 8 ter, and their query.

Invariant: a shape is declared in exactly one of these modules and imported from it; drf-spectacular
names each schema component after its class, so a class keeps its name when it moves. Nothing is
re-exported here.
"""
