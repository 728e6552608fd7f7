"""The pages people read on a screen, not through the API: the supervisors' award queue and its
payment slips (`/floor/`), and the auditors' story of a pool (`/audit/`).

Every page is served to a signed-in staff member with a role (a Django session; `layout`). A page
that changes anything is a shell whose script goes through the documented API (`/api/v1/`) with
that session and its CSRF token, so the roles, the two-person rules and the money checks are the
API's own, never repeated here; the sign-in's steps and the person's own account (`signin`,
`account`) are plain forms posted to themselves, which change only that person's own credentials
(`jackpot.staff.second_factor`, `jackpot.staff.accounts`), never money; a document (the payment
slip, `slips`) is rendered by the server from a selector's read, and changes nothing. Like the sign,
pages need nothing from outside the service: their style and scripts are inlined (`core.pages`), and
they read in French by default and English with `?lang=en`.
"""
