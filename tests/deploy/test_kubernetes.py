"""deploy/kubernetes/, validated offline: no cluster runs on the development machines.

Every manifest is checked against the Kubernetes API's own JSON schemas, strict
(unknown fields refused, as `kubectl apply --validate=strict` refuses them), for every
minor version from the oldest the workers can run on (1.33: user namespaces and an
unmasked /proc on by default) to the newest that kubernetes-validate carries. KEDA's
and the Prometheus Operator's objects are custom resources, in no Kubernetes schema
(kubernetes-validate says so: ``SchemaNotFoundError``) and in no package on PyPI: they
are checked against small JSON schemas written for this project from KEDA's and the
operator's documented specs (tests/deploy/schemas/). The GPU overlay's patches are
applied here (RFC 6902, as kustomize applies them) and the result validated too.

Then what no schema sees: the scaler's query counts exactly the rows a worker must
take, on the schema the migration Job's own command creates; the web's probes do not
wait for workers that scale to zero; the commands exist in the CLI; every setting is
one the app reads and production starts with them; one image; KEDA scales the
worker Deployment; the workers have what bubblewrap needs and nothing more. Nothing
here starts a sandbox, a server or a cluster.
"""

from __future__ import annotations

import copy
import json
import re
import tomllib
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # (no stubs pinned)
import kubernetes_validate  # type: ignore[import-untyped]  # (untyped)
import pytest
import yaml  # type: ignore[import-untyped]  # (flax depends on PyYAML; no stubs pinned)
from kubernetes_validate.utils import all_versions  # type: ignore[import-untyped]
from packaging.version import Version
from sqlalchemy import create_engine, func, insert, select, text

from app.commands import cli as app_cli
from app.core.config import PROJECT_ROOT, WebSettings, settings
from app.core.db import engine
from app.grading import queue
from app.models import RegradeItem, Submission, utcnow
from app.server.health import readiness
from app.server.health import router as health_router
from app.vocabulary import SubmissionStatus
from grader import cli as grader_cli
from grader.config import GraderSettings
from grader.problems.problem import load_problem, problem_folders

BASE = PROJECT_ROOT / "deploy" / "kubernetes"
GPU_OVERLAY = BASE / "overlays" / "gpu"
SCHEMAS = Path(__file__).parent / "schemas"
OLDEST_KUBERNETES = Version("1.33")  # hostUsers: false and procMount: Unmasked on by default
KUBERNETES_VERSIONS = sorted(
    {v for v in all_versions() if Version(v) >= OLDEST_KUBERNETES}, key=Version
)
CUSTOM_SCHEMAS = {
    ("keda.sh/v1alpha1", "ScaledObject"): "keda-scaledobject.json",
    ("keda.sh/v1alpha1", "TriggerAuthentication"): "keda-triggerauthentication.json",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): "servicemonitor.json",
}
SETTING_NAMES = {
    f"JAXJUDGE_{name.upper()}" for name in (*WebSettings.model_fields, *GraderSettings.model_fields)
}
OTHER_VARIABLES = {"NVIDIA_DRIVER_CAPABILITIES"}  # read by the NVIDIA runtime, not by jaxjudge

Manifest = dict[str, Any]


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text())


def _manifests(path: Path) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _kustomization(folder: Path) -> Manifest:
    found: Manifest = _load(folder / "kustomization.yaml")
    return found


def base_manifests() -> list[Manifest]:
    """What `kubectl apply -k deploy/kubernetes` applies (before kustomize's images)."""
    return [doc for name in _kustomization(BASE)["resources"] for doc in _manifests(BASE / name)]


def json_patch(document: Any, operations: list[dict[str, Any]]) -> Any:
    """RFC 6902's add, replace and remove: what the GPU overlay's patches use."""
    result = copy.deepcopy(document)
    for operation in operations:
        *parents, last = [
            part.replace("~1", "/").replace("~0", "~") for part in operation["path"].split("/")[1:]
        ]
        target = result
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        if operation["op"] == "remove":
            del target[int(last) if isinstance(target, list) else last]
        elif isinstance(target, list):
            if last == "-":
                target.append(operation["value"])
            elif operation["op"] == "add":
                target.insert(int(last), operation["value"])
            else:
                target[int(last)] = operation["value"]
        else:
            if operation["op"] == "replace" and last not in target:
                raise KeyError(f"replace of a missing {operation['path']}")
            target[last] = operation["value"]
    return result


def overlay_manifests(folder: Path) -> list[Manifest]:
    """An overlay of the base, as kustomize builds it: its resources and patches."""
    overlay = _kustomization(folder)
    assert [(folder / path).resolve() for path in overlay["resources"]] == [BASE.resolve()]
    documents = base_manifests()
    for patch in overlay["patches"]:
        target = patch["target"]
        api_version = f"{target['group']}/{target['version']}" if target.get("group") else "v1"
        matches = [
            i
            for i, doc in enumerate(documents)
            if (doc["apiVersion"], doc["kind"], doc["metadata"]["name"])
            == (api_version, target["kind"], target["name"])
        ]
        assert len(matches) == 1, f"{patch['path']} patches no single object of the base"
        documents[matches[0]] = json_patch(documents[matches[0]], _load(folder / patch["path"]))
    return documents


def every_manifest() -> Iterator[tuple[str, Manifest]]:
    """Every object in deploy/kubernetes: the base, the Secret's example, the optional
    files, and the GPU overlay as built."""
    for path in sorted(BASE.glob("*.yaml")) + sorted((BASE / "optional").glob("*.yaml")):
        if path.name != "kustomization.yaml":
            for doc in _manifests(path):
                yield f"{path.relative_to(BASE)}: {doc['kind']}", doc
    for doc in overlay_manifests(GPU_OVERLAY):
        yield f"overlays/gpu: {doc['kind']}", doc


def validate(manifest: Manifest, version: str) -> None:
    key = (manifest["apiVersion"], manifest["kind"])
    if key in CUSTOM_SCHEMAS:
        schema = json.loads((SCHEMAS / CUSTOM_SCHEMAS[key]).read_text())
        jsonschema.Draft202012Validator(schema).validate(manifest)
    else:
        kubernetes_validate.validate(manifest, version, strict=True)


def find(documents: list[Manifest], kind: str, name: str) -> Manifest:
    (found,) = [d for d in documents if d["kind"] == kind and d["metadata"]["name"] == name]
    return found


def pod_spec(workload: Manifest) -> Manifest:
    spec: Manifest = workload["spec"]["template"]["spec"]
    return spec


def containers(documents: list[Manifest]) -> Iterator[tuple[Manifest, Manifest]]:
    for doc in documents:
        if doc["kind"] in ("Deployment", "Job"):
            for container in pod_spec(doc)["containers"]:
                yield doc, container


def scaled_object(documents: list[Manifest]) -> Manifest:
    (found,) = [d for d in documents if d["kind"] == "ScaledObject"]
    return found


def keda_query() -> str:
    (trigger,) = [
        t for t in scaled_object(base_manifests())["spec"]["triggers"] if t["type"] == "postgresql"
    ]
    query: str = trigger["metadata"]["query"]
    return query


# Schemas.


def test_kubernetes_schemas_cover_the_core_kinds_and_not_the_custom_resources() -> None:
    assert KUBERNETES_VERSIONS[0] == "1.33.0" and len(KUBERNETES_VERSIONS) >= 5
    with pytest.raises(kubernetes_validate.SchemaNotFoundError):
        kubernetes_validate.validate(
            scaled_object(base_manifests()), KUBERNETES_VERSIONS[-1], strict=True
        )


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid(version: str) -> None:
    checked = 0
    for where, manifest in every_manifest():
        try:
            validate(manifest, version)
        except (jsonschema.ValidationError, kubernetes_validate.ValidationError) as error:
            path = ".".join(str(part) for part in error.path)
            pytest.fail(f"{where} {manifest['metadata']['name']}: {path}: {error.message}")
        checked += 1
    assert checked >= 14


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        # A misspelt field (the strict schemas refuse what the API server would drop).
        (
            "Deployment",
            ["spec", "template", "spec", "containers", 0, "securityContext", "procMounts"],
            "Unmasked",
        ),
        ("Deployment", ["spec", "replicas"], "2"),  # a string where an integer belongs
        ("Service", ["spec", "ports", 0, "port"], "http"),
        # KEDA: metadata values are strings; spec fields have their own names.
        ("ScaledObject", ["spec", "triggers", 0, "metadata", "targetQueryValue"], 6),
        ("ScaledObject", ["spec", "minReplicas"], 0),
        ("ScaledObject", ["spec", "fallback", "behaviour"], "static"),
        ("TriggerAuthentication", ["spec", "secretTargetRef", 0, "secret"], "jaxjudge"),
    ],
)
def test_a_broken_manifest_is_refused(kind: str, path: list[str | int], value: object) -> None:
    manifest = copy.deepcopy(next(d for d in base_manifests() if d["kind"] == kind))
    validate(manifest, KUBERNETES_VERSIONS[-1])  # valid as written
    target: Any = manifest
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    with pytest.raises((jsonschema.ValidationError, kubernetes_validate.ValidationError)):
        validate(manifest, KUBERNETES_VERSIONS[-1])


def test_the_kustomization_applies_every_manifest_but_the_secret_example() -> None:
    listed = _kustomization(BASE)["resources"]
    on_disk = {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    assert set(listed) == on_disk - {"secret.example.yaml"}
    assert "jaxjudge" in [
        d["metadata"]["name"] for d in base_manifests() if d["kind"] == "Namespace"
    ]
    for doc in base_manifests():  # kustomize sets it anyway; `kubectl apply -f` would not
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == _kustomization(BASE)["namespace"], doc
    assert [d["kind"] for d in _manifests(BASE / "secret.example.yaml")] == ["Secret"]
    known = {"apiVersion", "kind", "namespace", "resources", "images", "patches"}
    for folder in (BASE, GPU_OVERLAY):
        kustomization = _kustomization(folder)
        assert set(kustomization) <= known, set(kustomization) - known
        assert (kustomization["apiVersion"], kustomization["kind"]) == (
            "kustomize.config.k8s.io/v1beta1",
            "Kustomization",
        )


# The queue, the scaler and the probes, on the schema the migration Job makes.


@pytest.fixture(scope="module")
def migrated(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database migrated by the migration Job's own command, as the Job runs it."""
    job = find(base_manifests(), "Job", "jaxjudge-migrate")
    (container,) = pod_spec(job)["containers"]
    program, flag, code = container["command"]
    assert (program, flag) == ("python", "-c")
    url = f"sqlite:///{tmp_path_factory.mktemp('k8s') / 'jaxjudge.db'}"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(settings, "database_url", url)
        exec(compile(code, "migrate-job.yaml", "exec"), {})
        yield url
        engine().dispose()


QUEUE_ROWS = [
    # (status, lease expires in seconds, or None)
    (SubmissionStatus.QUEUED, None),
    (SubmissionStatus.QUEUED, None),
    (SubmissionStatus.RUNNING, 15),  # a worker is on it
    (SubmissionStatus.RUNNING, -60),  # its worker died: claimable again
    (SubmissionStatus.DONE, None),
    (SubmissionStatus.DONE, None),
]


def counted_by(query: Any, url: str) -> int:
    database = create_engine(url)
    try:
        with database.connect() as connection:
            value = connection.execute(text(query) if isinstance(query, str) else query)
            return int(value.scalar_one())
    finally:
        database.dispose()


@pytest.fixture(scope="module")
def queue_database(migrated: str) -> str:
    """The migrated database with submissions and regrade items in every status (foreign
    keys off on this connection: the rows they point at do not matter to a count)."""
    now = utcnow()
    with create_engine(migrated).begin() as connection:
        for number, (status, lease) in enumerate(QUEUE_ROWS, start=1):
            expires = None if lease is None else now + timedelta(seconds=lease)
            connection.execute(
                insert(Submission).values(
                    id=number,
                    user_id=1,
                    problem="p",
                    mode="submit",
                    code="",
                    status=status,
                    lease_expires_at=expires,
                )
            )
            connection.execute(
                insert(RegradeItem).values(
                    regrade_id=1,
                    submission_id=number,
                    status=status,
                    lease_expires_at=expires,
                    old_verdict=None,
                    old_score=None,
                )
            )
    return migrated


def test_the_scaler_counts_every_row_a_worker_must_take_and_no_other(queue_database: str) -> None:
    # Its words are the queue's: a status the query does not know would go uncounted.
    assert set(SubmissionStatus) == {"queued", "running", "done"}
    assert Submission.__tablename__ == "submissions"
    assert RegradeItem.__tablename__ == "regrade_items"
    unfinished = sum(status != SubmissionStatus.DONE for status, _ in QUEUE_ROWS)
    assert counted_by(keda_query(), queue_database) == 2 * unfinished  # both tables
    # And the check can fail: a misspelt status, or one table forgotten.
    assert counted_by(keda_query().replace("'queued'", "'queue'"), queue_database) != 2 * unfinished
    only_submissions = keda_query().split("+")[0].strip()
    assert counted_by(only_submissions, queue_database) == unfinished != 2 * unfinished
    # Every row a worker may claim now (app/grading/queue.py) is among those counted.
    for model in (Submission, RegradeItem):
        claimable = select(func.count()).select_from(model).where(queue._free(model, utcnow()))
        assert counted_by(claimable, queue_database) == unfinished - 1  # all but a live lease


def test_the_scaler_reads_the_queue_with_its_own_connection_to_the_same_database() -> None:
    (auth,) = [d for d in base_manifests() if d["kind"] == "TriggerAuthentication"]
    (reference,) = auth["spec"]["secretTargetRef"]
    assert reference["parameter"] == "connection"  # KEDA's postgresql scaler's parameter
    (secret,) = _manifests(BASE / "secret.example.yaml")
    keda = secret["stringData"][reference["key"]]
    app_url = secret["stringData"]["database-url"]
    assert reference["name"] == secret["metadata"]["name"]
    assert keda.startswith("postgresql://")  # Go's pgx: no SQLAlchemy driver name
    assert app_url.startswith("postgresql+psycopg://")
    host = re.compile(r"@([^/]+)/(\w+)")
    assert host.findall(keda) == host.findall(app_url)
    assert (
        keda.split("://")[1].split(":")[0] != app_url.split("://")[1].split(":")[0]
    )  # its own role


def test_keda_scales_the_worker_deployment_from_zero_and_apply_leaves_the_count_alone() -> None:
    for documents in (base_manifests(), overlay_manifests(GPU_OVERLAY)):
        scaler = scaled_object(documents)["spec"]
        target = scaler["scaleTargetRef"]
        worker = find(documents, "Deployment", target["name"])
        assert (target["apiVersion"], target["kind"]) == ("apps/v1", "Deployment")
        assert pod_spec(worker)["containers"][0]["command"][:2] == ["jaxjudge", "worker"]
        assert "replicas" not in worker["spec"]  # each apply would reset KEDA's count
        assert (
            scaler["minReplicaCount"]
            == 0
            <= scaler["fallback"]["replicas"]
            <= scaler["maxReplicaCount"]
        )
        names = [trigger["name"] for trigger in scaler["triggers"]]
        assert len(names) == len(set(names))
        for trigger in scaler["triggers"]:
            if trigger["type"] == "cron":
                assert int(trigger["metadata"]["desiredReplicas"]) <= scaler["maxReplicaCount"]
            if "authenticationRef" in trigger:
                find(documents, "TriggerAuthentication", trigger["authenticationRef"]["name"])


def test_web_pods_stay_in_the_service_while_no_worker_runs(migrated: str) -> None:
    """/readyz is 503 without a worker; the workers scale to zero; so the web's readiness
    must not be /readyz, or the site would vanish until a submission it cannot take."""
    body, status = readiness()
    assert status == 503 and body["problems"] == ["no grading worker reported in the last 15 s"]
    assert scaled_object(base_manifests())["spec"]["minReplicaCount"] == 0
    web = find(base_manifests(), "Deployment", "jaxjudge-web")
    (container,) = pod_spec(web)["containers"]
    routes = {getattr(route, "path", None) for route in health_router.routes}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        path = container[probe]["httpGet"]["path"]
        assert path in routes and path != "/readyz", probe
        assert container[probe]["httpGet"]["port"] == container["ports"][0]["name"]


# Commands, settings, image.


def parsed(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """`jaxjudge ARGV` as the entry point parses it, without running it."""
    seen: dict[str, Any] = {}

    def parse_only(parser: Any, args: list[str], *_errors: object) -> int:
        seen["args"] = parser.parse_args(args)
        return 0

    monkeypatch.setattr(grader_cli, "run", parse_only)
    app_cli.main(argv)
    return seen["args"]


def test_the_containers_run_commands_the_cli_has(monkeypatch: pytest.MonkeyPatch) -> None:
    web = find(base_manifests(), "Deployment", "jaxjudge-web")
    (container,) = pod_spec(web)["containers"]
    args = parsed(container["command"][1:], monkeypatch)
    assert args.handler is app_cli.cmd_serve
    assert (args.host, args.workers) == ("0.0.0.0", 0)
    assert args.port == container["ports"][0]["containerPort"]

    worker = find(base_manifests(), "Deployment", "jaxjudge-worker")
    (container,) = pod_spec(worker)["containers"]
    args = parsed(container["command"][1:], monkeypatch)
    assert args.handler is app_cli.cmd_worker
    # One grading thread per core requested, one warm sandbox per thread.
    assert args.threads == int(container["resources"]["requests"]["cpu"])
    pool = {e["name"]: e.get("value") for e in container["env"]}["JAXJUDGE_POOL_SIZE"]
    assert int(pool) == args.threads

    with pytest.raises(SystemExit):  # and a command it does not have is refused
        parsed(["worker", "--processes", "2"], monkeypatch)


def environment(container: Manifest, documents: list[Manifest]) -> dict[str, str]:
    """A container's environment, the Secret's values taken from its example."""
    (secret,) = _manifests(BASE / "secret.example.yaml")
    values: dict[str, str] = {}
    for source in container.get("envFrom", []):
        values |= find(documents, "ConfigMap", source["configMapRef"]["name"])["data"]
    for variable in container.get("env", []):
        if "value" in variable:
            values[variable["name"]] = variable["value"]
        else:
            reference = variable["valueFrom"]["secretKeyRef"]
            assert reference["name"] == secret["metadata"]["name"]
            values[variable["name"]] = secret["stringData"][reference["key"]]
    return values


@pytest.mark.parametrize("overlay", [None, GPU_OVERLAY], ids=["base", "gpu"])
def test_every_setting_is_one_jaxjudge_reads_and_production_starts_with_them(
    overlay: Path | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    documents = overlay_manifests(overlay) if overlay else base_manifests()
    for workload, container in containers(documents):
        values = environment(container, documents)
        unknown = set(values) - SETTING_NAMES - OTHER_VARIABLES
        assert not unknown, (workload["metadata"]["name"], unknown)
        for name in SETTING_NAMES:
            monkeypatch.delenv(name, raising=False)
        for name, value in values.items():
            monkeypatch.setenv(name, value)
        web, grader = WebSettings(), GraderSettings()  # every value parses
        assert web.database_url and web.database_url.startswith("postgresql+psycopg://")
        assert web.forwarded_allow_ips != "*"
        if container["command"][:2] == ["jaxjudge", "serve"]:
            web.check_for_production()  # refuses to start without a key and Secure cookies
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
        if workload["kind"] == "Deployment":
            assert mounts["data"] == str(grader.data_dir)  # the data dir is the emptyDir
            volumes = {v["name"]: v for v in pod_spec(workload)["volumes"]}
            assert "emptyDir" in volumes["data"] and "emptyDir" in volumes["tmp"]
            assert mounts["tmp"] == "/tmp"  # trusted runs' working folders, read-only root


def test_one_image_for_every_container_at_the_projects_version() -> None:
    version = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["version"]
    (image,) = _kustomization(BASE)["images"]
    assert (image["name"], image["newTag"]) == ("jaxjudge", version)
    assert {c["image"] for _, c in containers(base_manifests())} == {"jaxjudge"}
    gpu = {w["metadata"]["name"]: c["image"] for w, c in containers(overlay_manifests(GPU_OVERLAY))}
    assert gpu.pop("jaxjudge-worker") == f"{image['newName']}-gpu:{version}"
    assert set(gpu.values()) == {"jaxjudge"}  # the web and the Job keep the CPU image


# What the pods may do.


def security(container: Manifest) -> Manifest:
    found: Manifest = container["securityContext"]
    return found


def test_the_workers_have_what_bubblewrap_needs_and_nothing_more() -> None:
    worker = find(base_manifests(), "Deployment", "jaxjudge-worker")
    spec = pod_spec(worker)
    (container,) = spec["containers"]
    context = security(container)
    # The three exceptions docker-compose.yml makes for its workers, one for one.
    compose = _load(PROJECT_ROOT / "docker-compose.yml")["services"]
    counterparts = {
        "seccomp=unconfined": context["seccompProfile"] == {"type": "Unconfined"},
        "apparmor=unconfined": context["appArmorProfile"] == {"type": "Unconfined"},
        "systempaths=unconfined": context["procMount"] == "Unmasked",
    }
    assert set(compose["worker-1"]["security_opt"]) == set(counterparts)
    assert all(counterparts.values()), counterparts
    assert spec["hostUsers"] is False  # what makes the unmasked /proc acceptable
    # And nothing more: no capability, no privilege, no root, no host namespace.
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["allowPrivilegeEscalation"] is False and "privileged" not in context
    assert context["readOnlyRootFilesystem"] is True
    uid = re.search(r"useradd .*--uid (\d+) jaxjudge", (PROJECT_ROOT / "Dockerfile").read_text())
    assert uid and spec["securityContext"]["runAsUser"] == int(uid.group(1))
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert not {"hostPID", "hostIPC", "hostNetwork"} & set(spec)
    assert spec["automountServiceAccountToken"] is False
    # A worker that is told to stop finishes the grading in hand first: longer than any
    # grading of the bank may run (its wall-clock backstop: three times its CPU floor).
    longest = max(
        max(p.config.limits.wall_seconds, 3 * p.config.limits.cpu_seconds)
        for p in map(load_problem, problem_folders(PROJECT_ROOT))
    )
    assert spec["terminationGracePeriodSeconds"] > longest


def test_the_web_app_and_the_job_are_as_tight_as_the_restricted_standard() -> None:
    for workload, container in containers(base_manifests()):
        if workload["metadata"]["name"] == "jaxjudge-worker":
            continue
        spec, context = pod_spec(workload), security(container)
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert context == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }
        assert "hostUsers" not in spec and spec["automountServiceAccountToken"] is False


def test_the_gpu_overlay_asks_for_one_card_and_grades_on_it() -> None:
    worker = find(overlay_manifests(GPU_OVERLAY), "Deployment", "jaxjudge-worker")
    (container,) = pod_spec(worker)["containers"]
    assert container["name"] == "worker"  # the patches' /containers/0
    assert container["resources"]["limits"]["nvidia.com/gpu"] == 1
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["JAXJUDGE_PREFER_GPU"] == "true" and "compute" in env["NVIDIA_DRIVER_CAPABILITIES"]
    assert "utility" in env["NVIDIA_DRIVER_CAPABILITIES"]  # nvidia-smi: the memory watch
    base = find(base_manifests(), "Deployment", "jaxjudge-worker")
    assert security(container) == security(pod_spec(base)["containers"][0])
