"""The core as the doors see it: the one module the CLI and the MCP server import.

Every name a door may use is listed here with where it lives; nothing else of the core is
theirs to reach (`tests/test_architecture.py` holds them to it). A name is imported on
first use, not when this module is: `autoresearch --help` and a hook must start about as fast
as `import click`, and a door that only reads a run's status must not pay for the loop, the
report or Ray. mypy reads the names' types from the `TYPE_CHECKING` imports, which a test
holds equal to the table `_WHERE` that serves them at run time.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autoresearch import __version__ as __version__
    from autoresearch.agents import spec_choices as spec_choices
    from autoresearch.agents.base import AgentResult as AgentResult
    from autoresearch.contracts.job import MAX_REVISE_PASSES as MAX_REVISE_PASSES
    from autoresearch.contracts.job import BlockingPolicy as BlockingPolicy
    from autoresearch.contracts.job import ReliabilityTier as ReliabilityTier
    from autoresearch.contracts.job import SemanticGate as SemanticGate
    from autoresearch.contracts.loop import LoopSettings as LoopSettings
    from autoresearch.contracts.stored_evaluation import StoredEvaluation as StoredEvaluation
    from autoresearch.crash import EXIT_CLOSED_PIPE as EXIT_CLOSED_PIPE
    from autoresearch.crash import EXIT_INTERNAL_ERROR as EXIT_INTERNAL_ERROR
    from autoresearch.crash import disk_full_line as disk_full_line
    from autoresearch.crash import internal_error_line as internal_error_line
    from autoresearch.crash import output_closed as output_closed
    from autoresearch.crash import quiet_closed_output as quiet_closed_output
    from autoresearch.crash import write_crash_log as write_crash_log
    from autoresearch.decide import DEFAULT_MAX_AGENT_FAILURES as DEFAULT_MAX_AGENT_FAILURES
    from autoresearch.decide import DEFAULT_MAX_NOOPS as DEFAULT_MAX_NOOPS
    from autoresearch.demo import DEMO_MISSION as DEMO_MISSION
    from autoresearch.demo import LANES_MISSION as LANES_MISSION
    from autoresearch.demo import create_demo_repo as create_demo_repo
    from autoresearch.errors import AutoresearchError as AutoresearchError
    from autoresearch.errors import ContractError as ContractError
    from autoresearch.evaluate import EvaluationRecord as EvaluationRecord
    from autoresearch.experiments import InitParams as InitParams
    from autoresearch.experiments import InitResult as InitResult
    from autoresearch.experiments import LogParams as LogParams
    from autoresearch.experiments import LogReport as LogReport
    from autoresearch.experiments import NotesResult as NotesResult
    from autoresearch.experiments import RunNote as RunNote
    from autoresearch.experiments import RunParams as RunParams
    from autoresearch.experiments import RunReport as RunReport
    from autoresearch.experiments import StatusReport as StatusReport
    from autoresearch.experiments import annotate_runs as annotate_runs
    from autoresearch.experiments import close_session as close_session
    from autoresearch.experiments import confidence as confidence
    from autoresearch.experiments import init_session as init_session
    from autoresearch.experiments import list_sessions as list_sessions
    from autoresearch.experiments import log_experiment as log_experiment
    from autoresearch.experiments import logger as logger
    from autoresearch.experiments import reopen_session as reopen_session
    from autoresearch.experiments import resume_message as resume_message
    from autoresearch.experiments import run_experiment as run_experiment
    from autoresearch.experiments import session_status as session_status
    from autoresearch.experiments import status as status
    from autoresearch.experiments import update_notes as update_notes
    from autoresearch.experiments.hook_install import Host as Host
    from autoresearch.experiments.hook_install import install as install
    from autoresearch.experiments.hook_install import uninstall as uninstall
    from autoresearch.experiments.hooks import MAX_STDIN_BYTES as MAX_STDIN_BYTES
    from autoresearch.experiments.hooks import HookEvent as HookEvent
    from autoresearch.experiments.hooks import answer_hook as answer_hook
    from autoresearch.experiments.params import DEFAULT_CHECKS_TIMEOUT as DEFAULT_CHECKS_TIMEOUT
    from autoresearch.experiments.params import DEFAULT_RUN_TIMEOUT as DEFAULT_RUN_TIMEOUT
    from autoresearch.experiments.report import render_close as render_close
    from autoresearch.experiments.report import render_init as render_init
    from autoresearch.experiments.report import render_log as render_log
    from autoresearch.experiments.report import render_notes as render_notes
    from autoresearch.experiments.report import render_reopen as render_reopen
    from autoresearch.experiments.report import render_resume as render_resume
    from autoresearch.experiments.report import render_run as render_run
    from autoresearch.experiments.report import render_run_notes as render_run_notes
    from autoresearch.experiments.report import render_sessions as render_sessions
    from autoresearch.experiments.report import render_status as render_status
    from autoresearch.experiments.verbs import Door as Door
    from autoresearch.fsutil import atomic_write_text as atomic_write_text
    from autoresearch.fsutil import make_private as make_private
    from autoresearch.journal.lanes import LaneRecord as LaneRecord
    from autoresearch.journal.manifest import RunManifest as RunManifest
    from autoresearch.journal.sessions import SessionRecord as SessionRecord
    from autoresearch.journal.views import decision_label as decision_label
    from autoresearch.journal.views import format_score as format_score
    from autoresearch.jsonshape import json_keys as json_keys
    from autoresearch.mission import Mission as Mission
    from autoresearch.mission import load_mission as load_mission
    from autoresearch.mission import mission_problems as mission_problems
    from autoresearch.noise import Interval as Interval
    from autoresearch.paths import RepoPaths as RepoPaths
    from autoresearch.redact import current as current
    from autoresearch.redact import redact as redact
    from autoresearch.redact import redact_value as redact_value
    from autoresearch.report import build_run_report as build_run_report
    from autoresearch.report import build_session_report as build_session_report
    from autoresearch.report import run_data as run_data
    from autoresearch.report import session_data as session_data
    from autoresearch.report.serve import serve_report as serve_report
    from autoresearch.report.text import summary_lines as summary_lines
    from autoresearch.sandbox_modes import DEFAULT_MODE as DEFAULT_MODE
    from autoresearch.sandbox_modes import SandboxMode as SandboxMode
    from autoresearch.scaffold import MissionAnswers as MissionAnswers
    from autoresearch.scaffold import write_mission as write_mission
    from autoresearch.settings import kill_grace as kill_grace
    from autoresearch.signals import first_signal_stops as first_signal_stops
    from autoresearch.states import DecisionKind as DecisionKind
    from autoresearch.states import Direction as Direction
    from autoresearch.states import ExecutorKind as ExecutorKind
    from autoresearch.states import Isolation as Isolation
    from autoresearch.states import LaneState as LaneState
    from autoresearch.states import OnPlateau as OnPlateau
    from autoresearch.states import ProcessState as ProcessState
    from autoresearch.states import TaskKind as TaskKind
    from autoresearch.states import Verdict as Verdict
    from autoresearch.supervisor import doctor as doctor
    from autoresearch.supervisor import estimates as estimates
    from autoresearch.supervisor import lifecycle as lifecycle
    from autoresearch.supervisor import report as report
    from autoresearch.supervisor import summary as summary
    from autoresearch.supervisor.archive import better as better
    from autoresearch.supervisor.certify import Certification as Certification
    from autoresearch.supervisor.certify import ablation_summary as ablation_summary
    from autoresearch.supervisor.certify import certify as certify
    from autoresearch.supervisor.certify import level_moved as level_moved
    from autoresearch.supervisor.certify import open_any_run as open_any_run
    from autoresearch.supervisor.clean import clean as clean
    from autoresearch.supervisor.diagnose import baseline_warning as baseline_warning
    from autoresearch.supervisor.drive import LoopResult as LoopResult
    from autoresearch.supervisor.drive import Progress as Progress
    from autoresearch.supervisor.drive import StopMoment as StopMoment
    from autoresearch.supervisor.drive import demo_plan as demo_plan
    from autoresearch.supervisor.drive import resume as resume
    from autoresearch.supervisor.drive import start as start
    from autoresearch.supervisor.drive import start_demo as start_demo
    from autoresearch.supervisor.estimates import Headline as Headline
    from autoresearch.supervisor.estimates import manifest as manifest
    from autoresearch.supervisor.lifecycle import baseline_evaluation as baseline_evaluation
    from autoresearch.supervisor.lifecycle import open_run as open_run
    from autoresearch.supervisor.lifecycle import stop as stop
    from autoresearch.supervisor.options import check_sandbox as check_sandbox
    from autoresearch.supervisor.options import mission_sandbox as mission_sandbox
    from autoresearch.supervisor.prepare import mission_notes as mission_notes
    from autoresearch.supervisor.prepare import prepare as prepare
    from autoresearch.supervisor.prepare import rebaseline as rebaseline
    from autoresearch.supervisor.refs import KEPT_BEFORE_RESTORE as KEPT_BEFORE_RESTORE
    from autoresearch.supervisor.review import finalize as finalize
    from autoresearch.supervisor.run_ids import resolve_run_id as resolve_run_id
    from autoresearch.supervisor.run_read import find_repo as find_repo
    from autoresearch.supervisor.run_views import list_runs as list_runs
    from autoresearch.supervisor.run_views import run_details as run_details
    from autoresearch.supervisor.step import StepResult as StepResult
    from autoresearch.supervisor.step import refuse_unwritten as refuse_unwritten
    from autoresearch.supervisor.step import step as step
    from autoresearch.supervisor.summary import LoopSummary as LoopSummary
    from autoresearch.supervisor.summary import RunDetails as RunDetails
    from autoresearch.supervisor.summary import RunListing as RunListing
    from autoresearch.supervisor.summary import StopOutcome as StopOutcome
    from autoresearch.supervisor.trial import TrialResult as TrialResult
    from autoresearch.supervisor.trial import try_mission as try_mission
    from autoresearch.worker import jobs as jobs
    from autoresearch.worker import slots as slots
    from autoresearch.worker.model import DEFAULT_AGENT as DEFAULT_AGENT
    from autoresearch.worker.model import (
        DEFAULT_CHECK_TIMEOUT_SECONDS as DEFAULT_CHECK_TIMEOUT_SECONDS,
    )
    from autoresearch.worker.model import DEFAULT_TIMEOUT_SECONDS as DEFAULT_TIMEOUT_SECONDS
    from autoresearch.worker.model import MAX_STAGES as MAX_STAGES
    from autoresearch.worker.model import MAX_TIMEOUT_SECONDS as MAX_TIMEOUT_SECONDS
    from autoresearch.worker.model import CheckSpec as CheckSpec
    from autoresearch.worker.model import JobRequest as JobRequest
    from autoresearch.worker.model import ScopeSpec as ScopeSpec
    from autoresearch.worker.model import StageSpec as StageSpec
    from autoresearch.worker.model import check_timeout as check_timeout
    from autoresearch.worker.outcome import Status as Status
    from autoresearch.worker.tools import edits as edits
    from autoresearch.worker.tools import model_tools as model_tools
    from autoresearch.worker.tools import reading as reading
    from autoresearch.worker.tools import search as search
    from autoresearch.worker.tools import shell as shell
    from autoresearch.worker.tools.base import Workspace as Workspace
    from autoresearch.worker.tools.metrics import Category as Category
    from autoresearch.worker.tools.metrics import load as load
    from autoresearch.worker.tools.metrics import measured as measured
    from autoresearch.worker.tools.metrics import render_metrics as render_metrics
    from autoresearch.worker.tools.quality import QualityMode as QualityMode
    from autoresearch.worker.view import JobView as JobView
    from autoresearch.worker.view import render_job as render_job
    from autoresearch.worker.view import render_list as render_list

# name → (module, attribute); the attribute may be a submodule of that package.
_WHERE: dict[str, tuple[str, str]] = {
    "AgentResult": ("autoresearch.agents.base", "AgentResult"),
    "AutoresearchError": ("autoresearch.errors", "AutoresearchError"),
    "BlockingPolicy": ("autoresearch.contracts.job", "BlockingPolicy"),
    "Category": ("autoresearch.worker.tools.metrics", "Category"),
    "Certification": ("autoresearch.supervisor.certify", "Certification"),
    "CheckSpec": ("autoresearch.worker.model", "CheckSpec"),
    "ContractError": ("autoresearch.errors", "ContractError"),
    "KEPT_BEFORE_RESTORE": ("autoresearch.supervisor.refs", "KEPT_BEFORE_RESTORE"),
    "kill_grace": ("autoresearch.settings", "kill_grace"),
    "DEFAULT_AGENT": ("autoresearch.worker.model", "DEFAULT_AGENT"),
    "DEFAULT_CHECKS_TIMEOUT": ("autoresearch.experiments.params", "DEFAULT_CHECKS_TIMEOUT"),
    "DEFAULT_CHECK_TIMEOUT_SECONDS": ("autoresearch.worker.model", "DEFAULT_CHECK_TIMEOUT_SECONDS"),
    "DEFAULT_MAX_AGENT_FAILURES": ("autoresearch.decide", "DEFAULT_MAX_AGENT_FAILURES"),
    "DEFAULT_MAX_NOOPS": ("autoresearch.decide", "DEFAULT_MAX_NOOPS"),
    "DEFAULT_MODE": ("autoresearch.sandbox_modes", "DEFAULT_MODE"),
    "DEFAULT_RUN_TIMEOUT": ("autoresearch.experiments.params", "DEFAULT_RUN_TIMEOUT"),
    "DEFAULT_TIMEOUT_SECONDS": ("autoresearch.worker.model", "DEFAULT_TIMEOUT_SECONDS"),
    "DEMO_MISSION": ("autoresearch.demo", "DEMO_MISSION"),
    "DecisionKind": ("autoresearch.states", "DecisionKind"),
    "Direction": ("autoresearch.states", "Direction"),
    "Door": ("autoresearch.experiments.verbs", "Door"),
    "EXIT_CLOSED_PIPE": ("autoresearch.crash", "EXIT_CLOSED_PIPE"),
    "EXIT_INTERNAL_ERROR": ("autoresearch.crash", "EXIT_INTERNAL_ERROR"),
    "EvaluationRecord": ("autoresearch.evaluate", "EvaluationRecord"),
    "ExecutorKind": ("autoresearch.states", "ExecutorKind"),
    "Headline": ("autoresearch.supervisor.estimates", "Headline"),
    "HookEvent": ("autoresearch.experiments.hooks", "HookEvent"),
    "Host": ("autoresearch.experiments.hook_install", "Host"),
    "InitParams": ("autoresearch.experiments", "InitParams"),
    "InitResult": ("autoresearch.experiments", "InitResult"),
    "Interval": ("autoresearch.noise", "Interval"),
    "Isolation": ("autoresearch.states", "Isolation"),
    "JobRequest": ("autoresearch.worker.model", "JobRequest"),
    "JobView": ("autoresearch.worker.view", "JobView"),
    "LANES_MISSION": ("autoresearch.demo", "LANES_MISSION"),
    "LaneRecord": ("autoresearch.journal.lanes", "LaneRecord"),
    "LaneState": ("autoresearch.states", "LaneState"),
    "LogParams": ("autoresearch.experiments", "LogParams"),
    "LogReport": ("autoresearch.experiments", "LogReport"),
    "LoopResult": ("autoresearch.supervisor.drive", "LoopResult"),
    "LoopSettings": ("autoresearch.contracts.loop", "LoopSettings"),
    "LoopSummary": ("autoresearch.supervisor.summary", "LoopSummary"),
    "MAX_REVISE_PASSES": ("autoresearch.contracts.job", "MAX_REVISE_PASSES"),
    "MAX_STAGES": ("autoresearch.worker.model", "MAX_STAGES"),
    "MAX_STDIN_BYTES": ("autoresearch.experiments.hooks", "MAX_STDIN_BYTES"),
    "MAX_TIMEOUT_SECONDS": ("autoresearch.worker.model", "MAX_TIMEOUT_SECONDS"),
    "Mission": ("autoresearch.mission", "Mission"),
    "MissionAnswers": ("autoresearch.scaffold", "MissionAnswers"),
    "NotesResult": ("autoresearch.experiments", "NotesResult"),
    "OnPlateau": ("autoresearch.states", "OnPlateau"),
    "ProcessState": ("autoresearch.states", "ProcessState"),
    "Progress": ("autoresearch.supervisor.drive", "Progress"),
    "QualityMode": ("autoresearch.worker.tools.quality", "QualityMode"),
    "ReliabilityTier": ("autoresearch.contracts.job", "ReliabilityTier"),
    "RepoPaths": ("autoresearch.paths", "RepoPaths"),
    "RunDetails": ("autoresearch.supervisor.summary", "RunDetails"),
    "RunListing": ("autoresearch.supervisor.summary", "RunListing"),
    "RunManifest": ("autoresearch.journal.manifest", "RunManifest"),
    "RunNote": ("autoresearch.experiments", "RunNote"),
    "RunParams": ("autoresearch.experiments", "RunParams"),
    "RunReport": ("autoresearch.experiments", "RunReport"),
    "SandboxMode": ("autoresearch.sandbox_modes", "SandboxMode"),
    "ScopeSpec": ("autoresearch.worker.model", "ScopeSpec"),
    "SemanticGate": ("autoresearch.contracts.job", "SemanticGate"),
    "SessionRecord": ("autoresearch.journal.sessions", "SessionRecord"),
    "StageSpec": ("autoresearch.worker.model", "StageSpec"),
    "Status": ("autoresearch.worker.outcome", "Status"),
    "StatusReport": ("autoresearch.experiments", "StatusReport"),
    "StepResult": ("autoresearch.supervisor.step", "StepResult"),
    "StopMoment": ("autoresearch.supervisor.drive", "StopMoment"),
    "StopOutcome": ("autoresearch.supervisor.summary", "StopOutcome"),
    "StoredEvaluation": ("autoresearch.contracts.stored_evaluation", "StoredEvaluation"),
    "TaskKind": ("autoresearch.states", "TaskKind"),
    "TrialResult": ("autoresearch.supervisor.trial", "TrialResult"),
    "Verdict": ("autoresearch.states", "Verdict"),
    "Workspace": ("autoresearch.worker.tools.base", "Workspace"),
    "__version__": ("autoresearch", "__version__"),
    "ablation_summary": ("autoresearch.supervisor.certify", "ablation_summary"),
    "annotate_runs": ("autoresearch.experiments", "annotate_runs"),
    "answer_hook": ("autoresearch.experiments.hooks", "answer_hook"),
    "atomic_write_text": ("autoresearch.fsutil", "atomic_write_text"),
    "baseline_evaluation": ("autoresearch.supervisor.lifecycle", "baseline_evaluation"),
    "baseline_warning": ("autoresearch.supervisor.diagnose", "baseline_warning"),
    "better": ("autoresearch.supervisor.archive", "better"),
    "build_run_report": ("autoresearch.report", "build_run_report"),
    "build_session_report": ("autoresearch.report", "build_session_report"),
    "certify": ("autoresearch.supervisor.certify", "certify"),
    "check_sandbox": ("autoresearch.supervisor.options", "check_sandbox"),
    "check_timeout": ("autoresearch.worker.model", "check_timeout"),
    "clean": ("autoresearch.supervisor.clean", "clean"),
    "close_session": ("autoresearch.experiments", "close_session"),
    "confidence": ("autoresearch.experiments", "confidence"),
    "create_demo_repo": ("autoresearch.demo", "create_demo_repo"),
    "current": ("autoresearch.redact", "current"),
    "decision_label": ("autoresearch.journal.views", "decision_label"),
    "demo_plan": ("autoresearch.supervisor.drive", "demo_plan"),
    "disk_full_line": ("autoresearch.crash", "disk_full_line"),
    "doctor": ("autoresearch.supervisor", "doctor"),
    "edits": ("autoresearch.worker.tools", "edits"),
    "estimates": ("autoresearch.supervisor", "estimates"),
    "finalize": ("autoresearch.supervisor.review", "finalize"),
    "find_repo": ("autoresearch.supervisor.run_read", "find_repo"),
    "first_signal_stops": ("autoresearch.signals", "first_signal_stops"),
    "format_score": ("autoresearch.journal.views", "format_score"),
    "init_session": ("autoresearch.experiments", "init_session"),
    "install": ("autoresearch.experiments.hook_install", "install"),
    "internal_error_line": ("autoresearch.crash", "internal_error_line"),
    "jobs": ("autoresearch.worker", "jobs"),
    "json_keys": ("autoresearch.jsonshape", "json_keys"),
    "level_moved": ("autoresearch.supervisor.certify", "level_moved"),
    "lifecycle": ("autoresearch.supervisor", "lifecycle"),
    "list_runs": ("autoresearch.supervisor.run_views", "list_runs"),
    "list_sessions": ("autoresearch.experiments", "list_sessions"),
    "load": ("autoresearch.worker.tools.metrics", "load"),
    "load_mission": ("autoresearch.mission", "load_mission"),
    "log_experiment": ("autoresearch.experiments", "log_experiment"),
    "logger": ("autoresearch.experiments", "logger"),
    "make_private": ("autoresearch.fsutil", "make_private"),
    "manifest": ("autoresearch.supervisor.estimates", "manifest"),
    "measured": ("autoresearch.worker.tools.metrics", "measured"),
    "mission_notes": ("autoresearch.supervisor.prepare", "mission_notes"),
    "mission_problems": ("autoresearch.mission", "mission_problems"),
    "mission_sandbox": ("autoresearch.supervisor.options", "mission_sandbox"),
    "model_tools": ("autoresearch.worker.tools", "model_tools"),
    "open_any_run": ("autoresearch.supervisor.certify", "open_any_run"),
    "open_run": ("autoresearch.supervisor.lifecycle", "open_run"),
    "output_closed": ("autoresearch.crash", "output_closed"),
    "prepare": ("autoresearch.supervisor.prepare", "prepare"),
    "quiet_closed_output": ("autoresearch.crash", "quiet_closed_output"),
    "reading": ("autoresearch.worker.tools", "reading"),
    "rebaseline": ("autoresearch.supervisor.prepare", "rebaseline"),
    "redact": ("autoresearch.redact", "redact"),
    "redact_value": ("autoresearch.redact", "redact_value"),
    "refuse_unwritten": ("autoresearch.supervisor.step", "refuse_unwritten"),
    "render_close": ("autoresearch.experiments.report", "render_close"),
    "render_init": ("autoresearch.experiments.report", "render_init"),
    "render_job": ("autoresearch.worker.view", "render_job"),
    "render_list": ("autoresearch.worker.view", "render_list"),
    "render_log": ("autoresearch.experiments.report", "render_log"),
    "render_metrics": ("autoresearch.worker.tools.metrics", "render_metrics"),
    "render_notes": ("autoresearch.experiments.report", "render_notes"),
    "render_reopen": ("autoresearch.experiments.report", "render_reopen"),
    "render_resume": ("autoresearch.experiments.report", "render_resume"),
    "render_run": ("autoresearch.experiments.report", "render_run"),
    "render_run_notes": ("autoresearch.experiments.report", "render_run_notes"),
    "render_sessions": ("autoresearch.experiments.report", "render_sessions"),
    "render_status": ("autoresearch.experiments.report", "render_status"),
    "reopen_session": ("autoresearch.experiments", "reopen_session"),
    "report": ("autoresearch.supervisor", "report"),
    "resolve_run_id": ("autoresearch.supervisor.run_ids", "resolve_run_id"),
    "resume": ("autoresearch.supervisor.drive", "resume"),
    "resume_message": ("autoresearch.experiments", "resume_message"),
    "run_data": ("autoresearch.report", "run_data"),
    "run_details": ("autoresearch.supervisor.run_views", "run_details"),
    "run_experiment": ("autoresearch.experiments", "run_experiment"),
    "search": ("autoresearch.worker.tools", "search"),
    "serve_report": ("autoresearch.report.serve", "serve_report"),
    "session_data": ("autoresearch.report", "session_data"),
    "session_status": ("autoresearch.experiments", "session_status"),
    "shell": ("autoresearch.worker.tools", "shell"),
    "slots": ("autoresearch.worker", "slots"),
    "spec_choices": ("autoresearch.agents", "spec_choices"),
    "start": ("autoresearch.supervisor.drive", "start"),
    "start_demo": ("autoresearch.supervisor.drive", "start_demo"),
    "status": ("autoresearch.experiments", "status"),
    "step": ("autoresearch.supervisor.step", "step"),
    "stop": ("autoresearch.supervisor.lifecycle", "stop"),
    "summary": ("autoresearch.supervisor", "summary"),
    "summary_lines": ("autoresearch.report.text", "summary_lines"),
    "try_mission": ("autoresearch.supervisor.trial", "try_mission"),
    "uninstall": ("autoresearch.experiments.hook_install", "uninstall"),
    "update_notes": ("autoresearch.experiments", "update_notes"),
    "write_crash_log": ("autoresearch.crash", "write_crash_log"),
    "write_mission": ("autoresearch.scaffold", "write_mission"),
}


def __getattr__(name: str) -> object:
    """Import the name's module on first use and keep what it gave (PEP 562). `object`, not
    `Any`: mypy refuses a use of a name the table lacks instead of letting it through."""
    try:
        module, attribute = _WHERE[name]
    except KeyError:
        raise AttributeError(f"autoresearch.api has no {name!r}") from None
    home = importlib.import_module(module)
    try:
        value = getattr(home, attribute)
    except AttributeError:  # a submodule its package does not import itself
        value = importlib.import_module(f"{module}.{attribute}")
    globals()[name] = value
    return value


def names() -> tuple[str, ...]:
    """Every name the facade serves, sorted."""
    return tuple(sorted(_WHERE))
