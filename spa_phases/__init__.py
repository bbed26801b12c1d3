"""Two-phase capture of single-page apps (phase `initial` at load, `post_interaction` after an
action), supersession of stale content, hidden-instruction flagging, and the explorer that finds
the interactions which reveal content. Sits above `crawl` and `ingest`."""

from spa_phases.dom import Region, reads_like_instructions, regions
from spa_phases.errors import CaptureError, SnapshotError, SnapshotTooLargeError, SpaError
from spa_phases.phases import (
    HIDDEN_INSTRUCTIONS,
    PHASES,
    Phase,
    PhaseIngestor,
    Snapshot,
    SnapshotResult,
    snapshot_document_id,
)

__all__ = [
    "HIDDEN_INSTRUCTIONS",
    "PHASES",
    "CaptureError",
    "Phase",
    "PhaseIngestor",
    "Region",
    "Snapshot",
    "SnapshotError",
    "SnapshotResult",
    "SnapshotTooLargeError",
    "SpaError",
    "reads_like_instructions",
    "regions",
    "snapshot_document_id",
]
