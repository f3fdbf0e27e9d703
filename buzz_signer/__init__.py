"""buzz_signer: the thin Python layer of buzz membership.

The database keeps members and builds every membership event; this package holds the relay
key, checks and signs what the database prepared, and runs each write as one transaction.
"""
