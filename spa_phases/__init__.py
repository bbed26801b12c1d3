"""Two-phase capture of single-page apps (phase `initial` at load, `post_interaction` after an
action), supersession of stale content, hidden-instruction flagging, and the explorer that finds
the interactions which reveal content. Sits above `crawl` and `ingest`."""

from spa_phases.capture import Capture, CaptureReport, CaptureSpec
from spa_phases.dom import Region, reads_like_instructions, regions
from spa_phases.errors import CaptureError, SnapshotError, SnapshotTooLargeError, SpaError
from spa_phases.explorer import (
    Candidate,
    DeterministicPolicy,
    ExploreOptions,
    Explorer,
    PageUnderstanding,
    Policy,
    Step,
)
from spa_phases.llm import LlmPolicy
from spa_phases.phases import (
    HIDDEN_INSTRUCTIONS,
    PHASES,
    Phase,
    PhaseIngestor,
    Snapshot,
    SnapshotResult,
    snapshot_document_id,
)
from spa_phases.recipes import RecipeReport, run_recipe
from spa_phases.scan import (
    DomScanner,
    Element,
    GoalRanker,
    InvalidDomError,
    PageScan,
    Pattern,
    ScanAnswer,
    ScanError,
    Suggestion,
    answer,
    check_dom,
    page_patterns,
    parse_scan,
    read_scan,
    read_scanned,
)

__all__ = [
    "HIDDEN_INSTRUCTIONS",
    "PHASES",
    "Candidate",
    "Capture",
    "CaptureError",
    "CaptureReport",
    "CaptureSpec",
    "DeterministicPolicy",
    "DomScanner",
    "Element",
    "ExploreOptions",
    "Explorer",
    "GoalRanker",
    "InvalidDomError",
    "LlmPolicy",
    "PageScan",
    "PageUnderstanding",
    "Pattern",
    "Phase",
    "PhaseIngestor",
    "Policy",
    "RecipeReport",
    "Region",
    "ScanAnswer",
    "ScanError",
    "Snapshot",
    "SnapshotError",
    "SnapshotResult",
    "SnapshotTooLargeError",
    "SpaError",
    "Step",
    "Suggestion",
    "answer",
    "check_dom",
    "page_patterns",
    "parse_scan",
    "read_scan",
    "read_scanned",
    "reads_like_instructions",
    "regions",
    "run_recipe",
    "snapshot_document_id",
]
