"""deploy/kubernetes/ played for real with `podman kube play`: `make containers-test`'s
last stage (deploy/containers_test.py), or alone once the images are built:
`python deploy/kube_play.py`.

1. A node stands in for the cluster: a privileged container of Debian trixie's podman
   5.4 (deploy/containers/kubehost.Containerfile), because Debian 12's podman 4.3
   ignores what the worker pod needs (procMount: Unmasked: its sandboxes could not
   mount /proc) and the Secret and Job kinds. The images built for the compose stage
   are loaded into it.
2. PostgreSQL as a pod (deploy/containers/postgres-pod.yaml), until it answers.
3. The manifests as `kubectl apply -k deploy/kubernetes` would send them, but for what
   only a cluster has: the ConfigMap, the migration Job, the web and worker
   Deployments, with kustomization.yaml's image replaced by the local one, a Secret
   made here (database URL, signing key, metrics token), and the web's port published
   on 127.0.0.1 (a Service and an Ingress in a cluster). Namespace, PodDisruptionBudget,
   NetworkPolicy and KEDA's objects are a cluster's and are left out. Nothing in the
   pods' own specs is changed (security contexts, user namespaces, volumes, commands);
   podman reads a container's seccompProfile and appArmorProfile only in the
   annotations that carried them before they were fields, so those are added.
4. The Job must finish with status 0; /readyz must answer 200 (a worker reports in).
5. A learner and a token (the `jaxjudge` command in the web pod); a correct and a wrong
   submission through the API; then a submission that allocates memory until something
   stops it must end `memory_limit_exceeded` inside the worker pod, whose start-up
   line says what bounds its sandboxes.
6. Everything removed but the node's image storage (a cache for the next run).
"""

from __future__ import annotations

import base64
import contextlib
import secrets
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import yaml  # type: ignore[import-untyped]  # (flax depends on PyYAML; no stubs pinned)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from containers_test import (  # deploy/ is a folder of scripts
    APP_IMAGE,
    CONTAINERS,
    POSTGRES_IMAGE,
    QUICK_PROBLEM,
    ROOT,
    TestFailedError,
    build_image,
    create_learner_with,
    free_port,
    podman,
    progress,
    run,
    submit,
    tail,
    two_verdicts,
    verdict_of,
)

KUBERNETES = ROOT / "deploy" / "kubernetes"
PLAYED = ("configmap.yaml", "migrate-job.yaml", "web.yaml", "worker.yaml")
KINDS = ("ConfigMap", "Job", "Deployment")  # the rest is a cluster's (the module's docstring)
NODE = "jaxjudge_ctest_kubehost"
NODE_IMAGE = "localhost/jaxjudge-kubehost:{suite}"
READY_SECONDS = 600.0

# Grows until something stops it: 256 MiB a step, every page touched.
HOG = """
import numpy as np

def microbatched_grads(w, b, x_full, y_full, n_microbatches):
    kept = []
    while True:
        kept.append(np.ones(2**28, dtype=np.uint8))
"""


def inner(*args: str, check: bool = True, timeout: float = 300, stdin: str | None = None) -> str:
    """podman on the node."""
    done = run(
        ["podman", "exec", "-i", NODE, "podman", *args],
        check=check,
        timeout=timeout,
        input_text=stdin,
    )
    return done.stdout.strip()


def start_node(state: Path, suite: str) -> None:
    image = NODE_IMAGE.format(suite=suite)
    build_image(state, suite, image, CONTAINERS / "kubehost.Containerfile", CONTAINERS)
    storage = state / "kubehost-storage"  # kept between runs: the node's image cache
    storage.mkdir(exist_ok=True)
    podman("rm", "--force", NODE, check=False)
    podman(
        *("run", "--detach", "--name", NODE, "--privileged", "--cgroupns=host"),
        *("--network=host", "--volume", f"{storage}:/var/lib/containers", image),
    )
    progress.note(f"node: {inner('--version')} in {NODE} (privileged, as a node's runtime)")
    # What an interrupted run left in the node's storage.
    inner("pod", "rm", "--all", "--force", "--time", "5", check=False)
    inner("secret", "rm", "--all", check=False)
    for name in (APP_IMAGE, POSTGRES_IMAGE):
        ours = podman("image", "inspect", "--format", "{{.Id}}", name)
        theirs = inner("image", "inspect", "--format", "{{.Id}}", name, check=False)
        if ours != theirs:
            saved = state / "image.tar"
            podman("save", "--output", str(saved), name, timeout=600)
            run(["podman", "cp", str(saved), f"{NODE}:/tmp/image.tar"], timeout=600)
            saved.unlink()
            inner("load", "--quiet", "--input", "/tmp/image.tar", timeout=600)
            run(["podman", "exec", NODE, "rm", "/tmp/image.tar"])
        progress.note(f"node has {name}")


def play(document: str, name: str, state: Path) -> None:
    path = state / "logs" / f"kube-{name}.yaml"
    path.write_text(document)
    run(["podman", "cp", str(path), f"{NODE}:/tmp/{name}.yaml"])
    inner("kube", "play", f"/tmp/{name}.yaml", timeout=600)


def container(suffix: str) -> str:
    """The node's container whose name ends with ``suffix`` (kube play names them
    <pod>-<container>, a Deployment's pod <deployment>-pod)."""
    names = inner("ps", "--all", "--format", "{{.Names}}").split()
    found = [n for n in names if n.endswith(suffix)]
    if len(found) != 1:
        raise TestFailedError(f"no one container ending in {suffix!r} on the node: {names}")
    return found[0]


def logs(name: str) -> str:
    done = run(["podman", "exec", NODE, "podman", "logs", name], check=False)
    return done.stdout + done.stderr


def start_database(state: Path, password: str) -> None:
    pod = yaml.safe_load((CONTAINERS / "postgres-pod.yaml").read_text())
    for variable in pod["spec"]["containers"][0]["env"]:
        if variable["name"] == "POSTGRES_PASSWORD":
            variable["value"] = password
    play(yaml.safe_dump(pod), "db", state)
    db = container("jaxjudge-db-postgres")
    deadline = time.monotonic() + 120
    while run(["podman", "exec", NODE, "podman", "exec", db, "pg_isready"], check=False).returncode:
        if time.monotonic() > deadline:
            raise TestFailedError(f"PostgreSQL never answered:\n{tail(logs(db), 20)}")
        time.sleep(1)
    progress.note("jaxjudge-db: PostgreSQL answers (pg_isready)")


def _secret(values: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "jaxjudge"},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in values.items()},
    }


# A container's seccompProfile and appArmorProfile fields in the annotations that carried
# them before they were fields (Kubernetes 1.19 and 1.30), which is how podman reads them.
PROFILE_ANNOTATIONS = {
    "seccompProfile": "container.seccomp.security.alpha.kubernetes.io",
    "appArmorProfile": "container.apparmor.security.beta.kubernetes.io",
}


def _annotate_unconfined(template: dict[str, Any], container: dict[str, Any]) -> None:
    for field, annotation in PROFILE_ANNOTATIONS.items():
        profile = container.get("securityContext", {}).get(field, {})
        if profile.get("type") == "Unconfined":
            annotations = template.setdefault("metadata", {}).setdefault("annotations", {})
            annotations[f"{annotation}/{container['name']}"] = "unconfined"


def manifests(password: str, port: int) -> str:
    """What `kubectl apply -k` would send, for a node without a cluster (the docstring)."""
    documents: list[dict[str, Any]] = []
    for name in PLAYED:
        for document in yaml.safe_load_all((KUBERNETES / name).read_text()):
            if document and document["kind"] in KINDS:
                documents.append(document)
    for document in documents:
        document["metadata"].pop("namespace", None)
        template = document.get("spec", {}).get("template", {})
        spec = template.get("spec", {})
        for each in spec.get("containers", []):
            _annotate_unconfined(template, each)
            if each["image"] == "jaxjudge":  # kustomization.yaml's `images`
                each["image"] = APP_IMAGE
            if document["metadata"]["name"] == "jaxjudge-web":  # a Service in a cluster
                each["ports"][0]["hostPort"] = port
    url = f"postgresql+psycopg://jaxjudge:{password}@jaxjudge-db:5432/jaxjudge"
    secret = _secret(
        {
            "database-url": url,
            "secret-key": secrets.token_urlsafe(32),
            "metrics-token": secrets.token_urlsafe(32),
        }
    )
    played: str = yaml.safe_dump_all([secret, *documents], sort_keys=False)
    return played


def wait_for_migration() -> None:
    job = container("jaxjudge-migrate-pod-migrate")
    deadline = time.monotonic() + 300
    while (status := inner("inspect", "--format", "{{.State.Status}}", job)) != "exited":
        if time.monotonic() > deadline:
            raise TestFailedError(f"the migration Job is still {status}:\n{tail(logs(job), 20)}")
        time.sleep(1)
    code = inner("inspect", "--format", "{{.State.ExitCode}}", job)
    if code != "0":
        raise TestFailedError(f"the migration Job exited with {code}:\n{tail(logs(job), 30)}")
    progress.note("jaxjudge-migrate (Job): exited 0")


def wait_ready(url: str) -> None:
    deadline = time.monotonic() + READY_SECONDS
    last = "no answer"
    with httpx.Client(timeout=10) as client:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                answer = client.get(f"{url}/readyz")
                last = f"{answer.status_code} {answer.text[:200]}"
                if answer.status_code == 200:
                    progress.note(f"/readyz 200 through the web pod's published port ({url})")
                    return
            time.sleep(2)
    worker = logs(container("jaxjudge-worker-pod-worker"))
    raise TestFailedError(
        f"/readyz not ready in {READY_SECONDS:.0f} s; last: {last}\nworker:\n{tail(worker, 20)}"
    )


def sandbox_limits() -> str:
    for line in logs(container("jaxjudge-worker-pod-worker")).splitlines():
        if "sandbox limits:" in line:
            return line.split("sandbox limits: ", 1)[1]
    raise TestFailedError("the worker pod never said what bounds its sandboxes")


def memory_bounded(client: httpx.Client) -> None:
    began = time.monotonic()
    submission = submit(client, QUICK_PROBLEM, HOG)
    body = verdict_of(client, submission)
    if body["verdict"] != "memory_limit_exceeded":
        raise TestFailedError(
            f"a submission that allocates without end got {body['verdict']!r} in the worker"
            f" pod, not memory_limit_exceeded: {body.get('message')}"
        )
    bounded_by = sandbox_limits().split("; wall clock")[0]
    progress.note(
        f"memory hog: submission {submission} memory_limit_exceeded"
        f" ({time.monotonic() - began:.1f} s); the worker pod's sandboxes: {bounded_by}"
    )


def save_logs(state: Path) -> None:
    with contextlib.suppress(TestFailedError):
        for name in inner("ps", "--all", "--format", "{{.Names}}").split():
            (state / "logs" / f"kube-{name}.log").write_text(logs(name))


def teardown(state: Path) -> None:
    save_logs(state)
    podman("rm", "--force", "--time", "10", NODE, check=False, timeout=120)
    if podman("ps", "--all", "--quiet", "--filter", f"name=^{NODE}$"):
        raise TestFailedError(f"{NODE} is still there after its removal")
    progress.note("the node and its pods are gone (its image storage stays, a cache)")


@contextlib.contextmanager
def node(state: Path, suite: str) -> Iterator[None]:
    start_node(state, suite)
    try:
        yield
    finally:
        teardown(state)


def play_manifests(state: Path, suite: str) -> None:
    """The whole stage (the module's docstring), the node removed whatever happens."""
    password, port = secrets.token_urlsafe(18), free_port()
    with node(state, suite):
        start_database(state, password)
        play(manifests(password, port), "jaxjudge", state)
        progress.note(
            "played: the Secret, ConfigMap, migration Job, web and worker Deployments of"
            " deploy/kubernetes/"
        )
        wait_for_migration()
        url = f"http://127.0.0.1:{port}"
        wait_ready(url)
        web = container("jaxjudge-web-pod-web")
        token = create_learner_with(["podman", "exec", "-i", NODE, "podman", "exec", "-i", web])
        with httpx.Client(base_url=url, timeout=30) as client:
            client.headers["Authorization"] = f"Bearer {token}"
            two_verdicts(client)
            memory_bounded(client)


def main() -> int:
    from containers_test import configure, debian_suite

    state = Path("/var/lib/jaxjudge-ctest")
    (state / "logs").mkdir(parents=True, exist_ok=True)
    configure(state)
    try:
        with progress.step("deploy/kubernetes with podman kube play"):
            play_manifests(state, debian_suite(None))
    except TestFailedError as error:
        print(f"kube play: FAILED:\n{error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
