"""The relay key of a running process, and whether the database still records it (SPEC
section 10, "Failures an operator sees").

A rotation (`buzz-admin rotate-key`) records a new key in the database; a process still
holding the old one could sign nothing the database takes. So each process compares its key
with the recorded one (buzz.relay_key()) at start, whenever a rotation commits (NOTIFY
buzz_relay_key, heard by hub.py) and whenever its listening connection comes back; while they
differ it logs an error naming both, /healthz answers 503, and its writes are refused with
RETIRED instead of failing one by one. SIGHUP reads --key-file again (`reload`): the rotation
is `rotate-key`, the new key file, SIGHUP, with no connection dropped.
"""

from __future__ import annotations

import logging
from pathlib import Path

from ..keys import InvalidKey, RelayKey
from ..nip19 import encode_npub
from ..signer import Signer

log = logging.getLogger("buzz_relay")

RETIRED = "error: this relay holds a retired key; try again later"


class ReloadableSigner(Signer):
    """The sessions' signer (invites), made to sign with another key on SIGHUP: the sessions
    already open keep this object and sign with the new key from then on."""

    def load(self, key: RelayKey) -> None:
        Signer.__init__(self, key)


class RelayIdentity:
    """The key this process signs with, where it was read from, and the database's key."""

    def __init__(self, key: RelayKey, key_file: Path | None = None) -> None:
        self.key = key
        self.key_file = key_file
        self.signer = ReloadableSigner(key)
        self.recorded: str | None = None  # buzz.relay_key(), as last read

    @property
    def retired(self) -> bool:
        """Whether the database records a key and it is not this process's."""
        return self.recorded is not None and self.recorded != self.key.pubkey

    def describe(self) -> str:
        """The mismatch in words, naming both public keys (never a secret)."""
        assert self.recorded is not None
        return (
            f"this relay's key {encode_npub(self.key.pubkey)} is not the database's relay key"
            f" {encode_npub(self.recorded)} (rotated?): writes are refused until the new key is"
            " loaded (the new --key-file and SIGHUP, or a restart with it)"
        )

    def heard(self, recorded: str | None) -> None:
        """The database's key, as just read: say so when it stops or starts matching."""
        was = self.retired
        self.recorded = recorded
        if self.retired and not was:
            log.error("%s", self.describe())
        elif was and not self.retired:
            log.warning("this relay's key is the database's relay key again")

    def reload(self) -> bool:
        """Read --key-file again (SIGHUP); whether the key changed. A key from the
        environment cannot be read again: the process must restart with the new one."""
        if self.key_file is None:
            log.error(
                "SIGHUP: the key came from BUZZ_RELAY_SECRET_KEY, which a running process cannot"
                " read again; restart it with the new key (or give it --key-file)"
            )
            return False
        try:
            key = RelayKey.from_file(self.key_file)
        except (InvalidKey, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            log.error(
                "SIGHUP: %s could not be read (%s); still signing as %s",
                self.key_file, reason, encode_npub(self.key.pubkey),
            )  # fmt: skip
            return False
        if key.pubkey == self.key.pubkey:
            log.info("SIGHUP: %s holds the key already in use", self.key_file)
            return False
        was = self.retired
        old, self.key = self.key, key
        self.signer.load(key)
        log.warning(
            "SIGHUP: now signing as %s (was %s)", encode_npub(key.pubkey), encode_npub(old.pubkey)
        )
        if was and not self.retired:
            log.warning("this relay's key is the database's relay key again")
        elif self.retired and not was:
            log.error("%s", self.describe())
        return True
