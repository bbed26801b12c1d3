"""Errors of two-phase SPA capture.

SpaError
 ├── SnapshotError     a DOM snapshot lore cannot use (empty, unparseable, no text)
 │    └── SnapshotTooLargeError  over the size limit
 └── CaptureError      server-side capture could not load or drive the page
"""


class SpaError(Exception):
    """Root of every error the spa_phases package raises."""


class SnapshotError(SpaError):
    pass


class SnapshotTooLargeError(SnapshotError):
    pass


class CaptureError(SpaError):
    pass
