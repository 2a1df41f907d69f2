"""The MLflow tracker: one MLflow run per autoresearch run (in the experiment
`autoresearch/<mission>`, tagged `autoresearch.run_id`), one step per iteration.

Without `--tracker-uri` or MLFLOW_TRACKING_URI the store is SQLite in the repository's
`.autoresearch/tracking/` (mlflow.db, artifacts beside it): MLflow 3 refuses new file stores,
and SQLite needs only SQLAlchemy and Alembic beside mlflow-skinny (the `trackers` extra).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from pathlib import Path

from mlflow.entities import Metric, Param, RunStatus, RunTag
from mlflow.tracking import MlflowClient

from autoresearch.settings import mlflow_tracking_uri
from autoresearch.tracking import TrackedEnd, TrackedIteration, TrackedRun, TrackerConfig

DB_FILE = "mlflow.db"
ARTIFACTS_DIR = "artifacts"
RUN_ID_TAG = "autoresearch.run_id"
# the metric every step logs: its history says which iterations the store holds
STEP_METRIC = "kept"
# an autoresearch run's end, as MLflow's run status (a stopped run can be resumed: KILLED)
END_STATUS = {"completed": RunStatus.FINISHED, "failed": RunStatus.FAILED}


def default_uri(store: Path) -> str:
    return f"sqlite:///{store / DB_FILE}"


def make(config: TrackerConfig) -> MlflowTracker:
    """The entry point's factory."""
    return MlflowTracker(config)


class MlflowTracker:
    def __init__(self, config: TrackerConfig) -> None:
        # MLflow and Alembic say at INFO that they create tables: noise on the run's stderr
        for name in ("mlflow", "alembic"):
            logging.getLogger(name).setLevel(logging.WARNING)
        uri = config.uri or mlflow_tracking_uri()
        self._local = uri is None
        if uri is None:
            config.store.mkdir(parents=True, exist_ok=True)
            uri = default_uri(config.store)
        self._store = config.store
        self.location = uri
        # the model registry is never used; a file URI keeps mlflow-skinny from refusing
        self._client = MlflowClient(tracking_uri=uri, registry_uri=config.store.as_uri())
        self._run_id = ""

    def open(self, run: TrackedRun) -> int:
        client = self._client
        experiment = self._experiment(f"autoresearch/{run.mission}")
        query = f"tags.`{RUN_ID_TAG}` = '{run.run_id}'"
        found = client.search_runs([experiment], filter_string=query, max_results=1)
        if found:
            self._run_id = found[0].info.run_id
            client.update_run(self._run_id, status=RunStatus.to_string(RunStatus.RUNNING))
            history = client.get_metric_history(self._run_id, STEP_METRIC)
            return max((m.step for m in history), default=-1)
        made = client.create_run(experiment, run_name=run.run_id, tags=dict(run.tags))
        self._run_id = made.info.run_id
        params = [Param(k, v) for k, v in run.params.items()]
        client.log_batch(self._run_id, params=params)
        return -1

    def _experiment(self, name: str) -> str:
        found = self._client.get_experiment_by_name(name)
        if found is not None:
            return str(found.experiment_id)
        where = (self._store / ARTIFACTS_DIR).as_uri() if self._local else None
        return str(self._client.create_experiment(name, artifact_location=where))

    def log_iteration(self, step: TrackedIteration) -> None:
        n = step.iteration
        tags = {f"iteration.{n}.{k}": v for k, v in step.tags.items()}
        # the step metric last: a store that holds it holds the step's other values
        names = sorted(step.metrics, key=lambda k: k == STEP_METRIC)
        metrics = [_metric(k, step.metrics[k], n) for k in names]
        self._client.log_batch(self._run_id, metrics=metrics, tags=_tags(tags))

    def log_end(self, end: TrackedEnd) -> None:
        client = self._client
        metrics = [_metric(k, v, 0) for k, v in end.metrics.items()]
        client.log_batch(self._run_id, metrics=metrics, tags=_tags(end.tags))
        status = END_STATUS.get(end.tags.get("autoresearch.status", ""), RunStatus.KILLED)
        client.set_terminated(self._run_id, status=RunStatus.to_string(status))


def _metric(key: str, value: float, step: int) -> Metric:
    return Metric(key, value, int(time.time() * 1000), step)


def _tags(tags: Mapping[str, str]) -> list[RunTag]:
    return [RunTag(k, v) for k, v in tags.items()]
