"""Problem folders in and out: a zip in exactly the bank's layout, and the safe reading of
one (or of a folder on disk) that came from outside.

The layout is the bank's, the only one: ``problems/<name>/...`` with each problem's
reference at ``reference_solutions/<name>.py``, one or several problems under one root.
A zip may wrap that root in one top-level folder (GitHub's "Download ZIP" and
``git archive --prefix`` do); files elsewhere (a README, ``.github/``) are left out.

An upload is untrusted: its entries are bounded (count, each file, the whole, the
compression ratio), named safely (no absolute path, no ``..``, no link or device, no
duplicate), and each problem is validated by loading it from a temporary copy without
running any of its code. Every error is one sentence naming the file."""

from __future__ import annotations

import ast
import io
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.errors import ProblemError
from grader.problems.problem import SLUG
from grader.problems.snapshot import materialise
from grader.problems.source import PROBLEMS, REFERENCES, ProblemSource

MAX_ENTRIES = 1000
MAX_FILE_BYTES = 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024
MAX_RATIO = 100  # uncompressed over compressed: text compresses ~5x; bombs ~1000x
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
_LEFT_OUT = ("__pycache__", "__MACOSX", ".DS_Store")


class FolderError(ValueError):
    """An upload that cannot be imported; ``errors`` holds one sentence per problem found."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__("; ".join(errors))


@dataclass(frozen=True)
class FolderProblem:
    """One problem of an upload: its name and its files by bank path (``problems/<name>/``)."""

    name: str
    files: dict[str, bytes]


def renamed(files: dict[str, bytes], old: str, new: str) -> dict[str, bytes]:
    """The same files under slug ``new``: the folder and the reference renamed."""
    folder, reference = f"{PROBLEMS}/{old}/", f"{REFERENCES}/{old}.py"
    moved: dict[str, bytes] = {}
    for path, data in files.items():
        if path == reference:
            moved[f"{REFERENCES}/{new}.py"] = data
        elif path.startswith(folder):
            moved[f"{PROBLEMS}/{new}/{path[len(folder) :]}"] = data
        else:
            raise ValueError(f"{path!r} is not a file of problem {old!r}")
    return moved


def export(files: dict[str, bytes], *, slug: str, name: str) -> bytes:
    """A zip of problem ``slug``'s files under the name ``name``, in the bank's layout.
    Deterministic: sorted entries, fixed times and modes, so one version exports to the
    same bytes every time."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in sorted(renamed(files, slug, name).items()):
            entry = zipfile.ZipInfo(path, date_time=_FIXED_TIME)
            entry.create_system = 3  # Unix: the mode below means what it says
            entry.external_attr = (stat.S_IFREG | 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return buffer.getvalue()


def read_upload(source: bytes | Path) -> list[FolderProblem]:
    """The problems of a zip (its bytes) or of a folder on disk (a root holding
    ``problems/``, or one ``problems/<name>`` folder), read safely; raises ``FolderError``."""
    entries = _folder_entries(source) if isinstance(source, Path) else _zip_entries(source)
    return _problems(entries)


def validate(problems: list[FolderProblem]) -> list[str]:
    """One sentence per error of any problem (schema, files, Python syntax), found by
    loading each from a temporary copy; none of their code runs. Empty when all load."""
    errors: list[str] = []
    for problem in problems:
        errors.extend(_problem_errors(problem))
    return errors


def _problem_errors(problem: FolderProblem) -> list[str]:
    if not SLUG.match(problem.name):
        return [
            f"{PROBLEMS}/{problem.name}: a problem folder's name is lower-case letters,"
            " digits and single hyphens (for example 'masked-softmax')"
        ]
    errors = [_syntax_error(path, data) for path, data in sorted(problem.files.items())]
    found = [error for error in errors if error]
    if found:
        return found
    with tempfile.TemporaryDirectory(prefix="jaxjudge-import-") as temporary:
        root = Path(temporary)
        try:
            materialise(problem.name, problem.files, root, trusted=False)
        except ProblemError as error:
            return [_relative(error, root)]
        except (UnicodeDecodeError, ValueError, OSError) as error:
            return [f"{PROBLEMS}/{problem.name}: cannot be read ({error})"]
    return []


def _syntax_error(path: str, data: bytes) -> str:
    if not path.endswith(".py"):
        return ""
    try:
        ast.parse(data, filename=path)
    except SyntaxError as error:
        return f"{path}, line {error.lineno}: {error.msg}"
    except ValueError as error:  # null bytes
        return f"{path}: not Python source ({error})"
    return ""


def _relative(error: ProblemError, root: Path) -> str:
    """The error with its file named by bank path, not by the temporary copy's."""
    where = error.path
    for base in root.iterdir():  # materialise writes under root/<content hash>/
        try:
            where = error.path.relative_to(base)
            break
        except ValueError:
            continue
    name = where.as_posix()
    return f"{name}: {error.field}: {error.message}" if error.field else f"{name}: {error.message}"


def _zip_entries(data: bytes) -> dict[str, bytes]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        raise FolderError(["the upload is not a zip file"]) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise FolderError([f"the zip holds more than {MAX_ENTRIES} entries"])
        entries: dict[str, bytes] = {}
        total = 0
        for info in infos:
            if info.is_dir():
                continue
            name = _safe_name(info.filename)
            mode = info.external_attr >> 16
            if info.create_system == 3 and stat.S_IFMT(mode) not in (0, stat.S_IFREG):
                raise FolderError([f"{name}: links and special files are not accepted"])
            if info.flag_bits & 0x1:
                raise FolderError([f"{name}: encrypted entries are not accepted"])
            if info.file_size > MAX_FILE_BYTES:
                raise FolderError([f"{name}: larger than {MAX_FILE_BYTES // 1024} KiB"])
            if info.file_size > 64 * 1024 and info.file_size > MAX_RATIO * info.compress_size:
                raise FolderError([f"{name}: compressed more than {MAX_RATIO} times"])
            total += info.file_size
            if total > MAX_TOTAL_BYTES:
                raise FolderError([f"the zip holds more than {MAX_TOTAL_BYTES // 2**20} MiB"])
            if name in entries:
                raise FolderError([f"{name}: appears twice in the zip"])
            try:
                with archive.open(info) as member:
                    content = member.read(MAX_FILE_BYTES + 1)  # never trust the declared size
            except (zipfile.BadZipFile, NotImplementedError, ValueError, OSError, EOFError):
                raise FolderError([f"{name}: cannot be read from the zip"]) from None
            if len(content) != info.file_size:
                raise FolderError([f"{name}: its size differs from the one the zip declares"])
            entries[name] = content
    return _unwrapped(entries)


def _safe_name(name: str) -> str:
    path = PurePosixPath(name)
    if (
        "\\" in name
        or "\0" in name
        or path.is_absolute()
        or ".." in path.parts
        or (path.parts and ":" in path.parts[0])
    ):
        raise FolderError([f"{name!r}: an unsafe path (absolute, '..' or a drive)"])
    return path.as_posix()


def _folder_entries(path: Path) -> dict[str, bytes]:
    if not path.is_dir():
        raise FolderError([f"{path}: no such folder"])
    root = path
    if path.parent.name == PROBLEMS and not (path / PROBLEMS).is_dir():  # one problem's folder
        root = path.parent.parent
        source = ProblemSource(root, path.name)
        paths = [*sorted(path.rglob("*")), source.reference]
    else:
        paths = [*sorted((root / PROBLEMS).rglob("*")), *sorted((root / REFERENCES).glob("*.py"))]
    entries: dict[str, bytes] = {}
    total = 0
    for file in paths:
        if _linked(file, root) or (file.exists() and not (file.is_file() or file.is_dir())):
            raise FolderError([f"{file}: links and special files are not accepted"])
        if not file.is_file():
            continue
        size = file.stat().st_size
        total += size
        if size > MAX_FILE_BYTES:
            raise FolderError([f"{file}: larger than {MAX_FILE_BYTES // 1024} KiB"])
        if total > MAX_TOTAL_BYTES or len(entries) >= MAX_ENTRIES:
            raise FolderError([f"{path}: more than {MAX_TOTAL_BYTES // 2**20} MiB or files"])
        entries[file.relative_to(root).as_posix()] = file.read_bytes()
    return entries


def _linked(file: Path, root: Path) -> bool:
    """Whether ``file`` or a folder between it and ``root`` is a link (``problems`` or
    ``reference_solutions`` linked elsewhere: the files below are no links, yet each is
    read through one)."""
    parts = file.relative_to(root).parts
    return any(root.joinpath(*parts[: depth + 1]).is_symlink() for depth in range(len(parts)))


def _unwrapped(entries: dict[str, bytes]) -> dict[str, bytes]:
    """The entries under their root: one top-level folder wrapping everything is taken off
    when the root is not at the top already."""
    if any(name.split("/", 1)[0] in (PROBLEMS, REFERENCES) for name in entries):
        return entries
    tops = {name.split("/", 1)[0] for name in entries if "/" in name}
    if len(tops) == 1:
        top = tops.pop()
        return {
            name[len(top) + 1 :]: data
            for name, data in entries.items()
            if name.startswith(f"{top}/")
        }
    return entries


def _problems(entries: dict[str, bytes]) -> list[FolderProblem]:
    kept = {
        name: data
        for name, data in entries.items()
        if not any(part in _LEFT_OUT for part in name.split("/"))
    }
    names = sorted(
        {
            name.split("/")[1]
            for name in kept
            if name.startswith(f"{PROBLEMS}/") and name.count("/") >= 2
        }
    )
    errors = [
        f"{name}: a reference without its folder {PROBLEMS}/{PurePosixPath(name).stem}/"
        for name in sorted(kept)
        if name.startswith(f"{REFERENCES}/")
        and name.endswith(".py")
        and name.count("/") == 1
        and PurePosixPath(name).stem not in names
    ]
    if errors:
        raise FolderError(errors)
    if not names:
        raise FolderError(
            [
                f"no problem found: put each problem in {PROBLEMS}/<name>/ with its reference at"
                f" {REFERENCES}/<name>.py (the bank's layout, what an export gives)"
            ]
        )
    problems = []
    for name in names:
        files = {
            path: data
            for path, data in kept.items()
            if path.startswith(f"{PROBLEMS}/{name}/") or path == f"{REFERENCES}/{name}.py"
        }
        problems.append(FolderProblem(name=name, files=files))
    return problems
