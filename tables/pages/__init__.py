"""The pages people read on a screen, not through the API: the supervisors' award queue and its
payment slips (`/floor/`), and the auditors' story of a pool (`/audit/`).

Every page is a shell served to a signed-in staff member (a Django session); what it shows and
every change it makes goes through the documented API (`/api/v1/`) with that session and its CSRF
token, so the roles, the two-person rules and the money checks are the API's own, never repeated
here. Like the sign, pages need nothing from outside the service: their style and scripts are
served by it, and they read in French by default and English with `?lang=en`.
"""
