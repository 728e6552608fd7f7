"""The club's sessions: their opening and close with the journal's snapshot, the drop boxes'
counts by two people, and the registers models 8 and 8 ter (compliance 54)."""
