"""Run the notebooks with papermill: every paper's tables and figures, end to end.

``simul reproduce [--quick] [--only NAME ...]`` (``make reproduce`` runs it in full) executes
each notebook ``notebooks/<name>.ipynb`` (its grid, tables and claims in the module
:attr:`Notebook.module`, e.g. ``simul/papers/<name>.py`` or the package
``simul/papers/<name>/``) with its parameters set to write

- the executed copy to ``notebooks/executed/<name>.ipynb``,
- figures (PNG, PDF) and tables (Markdown, CSV) to ``figures/<name>/``,
- sweep results (cached, resumable) to ``runs/<full|quick>/<name>/``.

``--quick`` runs each notebook on a handful of utterances (the test suite does this, into
a temporary folder); the full run uses each notebook's own ``max_utterances`` unless
``--max-utterances N`` sets one for all (results go to ``runs/n<N>/``, apart from the
full run's). ``--device cuda`` (or ``cpu``, ``cuda:N``) decodes every notebook's sweeps
there: the kernels run with ``SIMUL_DEVICE`` set (:data:`simul.papers.notebook.DEVICE_ENV`, read
by :func:`simul.papers.notebook.setup`), so no notebook needs a parameter for it. The GPU path has
not been run on a GPU.

``--model NAME|DIR|OWNER/REPO`` sets the model of the notebooks that study one
(:attr:`Notebook.model_param`: the tutorial, N21's Table 1, M20, K22, H20), e.g. a published
model on a MuST-C root (``--corpus``); ``--parameters FILE.yaml`` sets any parameter of the
notebooks' ``parameters`` cells (a name no chosen notebook has is refused, naming the file).
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import importlib
import json
import multiprocessing
import os
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from simul.papers.notebook import DEVICE_ENV
from simul.sweep import store as store_module

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = REPO / "notebooks"
FIGURES_DIR = REPO / "figures"
EXECUTED_DIR = NOTEBOOKS_DIR / "executed"
RUNS_DIR = REPO / "runs"
QUICK_UTTERANCES = 2
QUICK_CELL_TIMEOUT_S = 900
UNIX_SOCKET_PATH_MAX = 107  # sun_path's 108 bytes, less the closing NUL


@dataclass(frozen=True)
class Notebook:
    name: str  # notebooks/<name>.ipynb, figures/<name>/
    module: str  # its grid, tables, claims and KNOWN_GAPS (simul/papers/<name>.py or <name>/)
    what: str
    batch: tuple[tuple[str, object], ...] = ()  # parameters of a papermill run, beyond the common
    model_param: str | None = None  # the parameter --model sets (None: several models, no one)

    @property
    def file(self) -> str:
        return f"{self.name}.ipynb"

    def known_gaps(self, stage: str = "first") -> dict[str, str]:
        """The module's ``KNOWN_GAPS`` (claim id → why the full run contradicts it), or for
        ``stage="confirm"`` its ``CONFIRMED_GAPS`` (why the confirmatory run's fresh
        segments contradict a claim the full run left undecided; none when it has none)."""
        module = importlib.import_module(self.module)
        return module.KNOWN_GAPS if stage == "first" else getattr(module, "CONFIRMED_GAPS", {})


NOTEBOOKS = (
    Notebook("tutorial", "simul.papers.tutorial",
             "one utterance, its READ/WRITE timeline, partial outputs",
             # nobody moves sliders in a batch run, and the kernel's widget messages can leave
             # the papermill client waiting for a reply that never comes
             batch=(("sliders", False),), model_param="model"),
    Notebook("nguyen2021", "simul.papers.nguyen2021",
             "N21: wait-k with stride and multi-unit writes — Tables 1–2, Figures 2–3",
             model_param="char_model"),
    Notebook("papi2022", "simul.papers.papi2022",
             "P22: offline models with wait-k over detected words — Tables 1–2, Figs 1–6"),
    Notebook("ma2020", "simul.papers.ma2020",
             "M20: fixed and flexible pre-decision — Figures 2a, 3, 4", model_param="model"),
    Notebook("polak2022", "simul.papers.polak2022",
             "K22: onlinization, hold-n / LA-n / SP-n — Figures 1–3, Tables 1–2",
             model_param="model"),
    Notebook("han2020", "simul.papers.han2020",
             "H20: wait-k with stride and catch-up at decode time — Tables 6–7",
             model_param="model"),
    Notebook("compare_policies", "simul.papers.compare_policies",
             "every policy's best curve per model, NCA and CA; cost table"),
)


def known_gaps(chosen: list[Notebook] | tuple[Notebook, ...] = NOTEBOOKS, *,
               stage: str = "first") -> dict[str, str]:
    """Claim id → reason, for every claim of ``chosen`` notebooks that the full run
    contradicts (each module's ``KNOWN_GAPS``), or with ``stage="confirm"`` that the
    confirmatory run contradicts (``CONFIRMED_GAPS``)."""
    out: dict[str, str] = {}
    for nb in chosen:
        gaps = nb.known_gaps(stage)
        twice = sorted(set(out) & set(gaps))
        if twice:
            raise ValueError(f"{nb.module}.KNOWN_GAPS: claim ids {twice} are listed by another "
                             "notebook's module too")
        out.update(gaps)
    return out


def notebook_parameters(nb: Notebook) -> list[str]:
    """The names the notebook's ``parameters`` cell assigns, in its order."""
    import ast

    cells = json.loads((NOTEBOOKS_DIR / nb.file).read_text())["cells"]
    for cell in cells:
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(cell["source"]))
            return [t.id for node in tree.body if isinstance(node, ast.Assign)
                    for t in node.targets if isinstance(t, ast.Name)]
    return []


def read_parameters(path: str | Path) -> dict:
    """A parameters file (YAML: ``name: value`` per line), or a ``ValueError`` naming it."""
    import yaml

    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"--parameters {path}: not a readable YAML file "
                         f"({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise ValueError(f"--parameters {path}: expected a mapping of parameter names to "
                         "values (e.g. model: facebook/s2t-small-mustc-en-de-st)")
    return data


def catalogue() -> str:
    """Every notebook's declared findings as Markdown
    (:func:`simul.analysis.claims.catalogue_markdown`): the catalogue of
    ``docs/reference/claims.md``."""
    from simul.analysis.claims import catalogue_markdown

    return catalogue_markdown(f for nb in NOTEBOOKS
                              for f in importlib.import_module(nb.module).FINDINGS.values())


def notebooks(only: list[str] | None = None) -> list[Notebook]:
    known = {nb.name: nb for nb in NOTEBOOKS}
    if not only:
        return list(NOTEBOOKS)
    unknown = [n for n in only if n not in known]
    if unknown:
        raise ValueError(f"unknown notebook(s) {unknown}; known: {list(known)}")
    return [known[n] for n in only]


@functools.cache
def kernel_manager_class():
    """The kernels' manager: jupyter_client's, except that its kernels talk over Unix
    sockets and that shutting a finished notebook's kernel down sends no interrupt first.

    Over TCP, jupyter_client picks five free ports by binding and closing them, and the
    kernel binds them again later: notebooks started at once (a quick run's one per core)
    can draw the same port in between, and the kernel dies with "Address already in use"
    before it replies. Each kernel's IPC sockets are files under the temporary folder named
    by a fresh UUID, which no other kernel shares (an absolute path: the kernel runs in the
    notebook's folder). Where that path would pass the length a Unix socket's name allows,
    the kernels keep TCP.

    After the last cell papermill asks for the kernel's info and, on the reply, shuts the
    kernel down; jupyter_client's shutdown begins with an interrupt (SIGINT), and ipykernel
    arms SIGINT as KeyboardInterrupt while it handles a request, so a kernel still finishing
    that request logs ``[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel.`` on a
    notebook that passed. Nothing runs by then (papermill has every reply): the shutdown
    request alone stops the kernel, and jupyter_client kills one that does not stop in
    time (a cell that timed out). Interrupts outside a shutdown are sent as before."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import default

    class FinishedNotebookKernelManager(AsyncKernelManager):
        @functools.cached_property
        def ipc_prefix(self) -> str:
            return os.path.join(tempfile.gettempdir(), f"simul-kernel-{uuid.uuid4().hex}")

        @default("transport")
        def _transport_default(self) -> str:
            # the sockets are PREFIX-1 … PREFIX-5
            return "ipc" if len(self.ipc_prefix) + 2 < UNIX_SOCKET_PATH_MAX else "tcp"

        @default("ip")
        def _ip_default(self) -> str:
            return self.ipc_prefix if self.transport == "ipc" else super()._ip_default()

        async def _async_interrupt_kernel(self) -> None:
            if getattr(self, "shutting_down", False):
                return
            await super()._async_interrupt_kernel()

    return FinishedNotebookKernelManager


def _execute(file: str, out: Path, params: dict, quick: bool, threads: int | None) -> float:
    """Execute one notebook with papermill; its wall time in seconds."""
    import papermill as pm

    if threads:  # the kernel inherits it: torch and BLAS in it use that many threads
        for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
    t0 = time.perf_counter()
    pm.execute_notebook(NOTEBOOKS_DIR / file, out, parameters=params,
                        cwd=str(NOTEBOOKS_DIR), kernel_name="python3", progress_bar=False,
                        log_output=False, kernel_manager_class=kernel_manager_class(),
                        # a quick run's cells take seconds: a stuck one fails, not hangs
                        execution_timeout=QUICK_CELL_TIMEOUT_S if quick else None)
    return time.perf_counter() - t0


def run(only: list[str] | None = None, *, quick: bool = False,
        figures_dir: str | Path = FIGURES_DIR, executed_dir: str | Path = EXECUTED_DIR,
        runs_dir: str | Path = RUNS_DIR, corpus: str | None = None,
        dask_scheduler: str | None = None, max_utterances: int | None = None,
        jobs: int | None = None, store: bool = True, device: str | None = None,
        model: str | None = None, parameters: dict | None = None,
        parameters_file: str | Path | None = None, log=print) -> dict[str, Path]:
    """Execute the notebooks; return {name: executed notebook path}. Stops at the first
    notebook that fails (papermill's error names the cell; the partial copy is kept).

    ``model`` sets each notebook's :attr:`Notebook.model_param` (refused for a notebook
    without one); ``parameters`` (read from ``parameters_file``, which the errors name) set
    the notebooks' parameters by name, each one that some chosen notebook has (a notebook
    takes those it has).

    ``jobs`` notebooks run at once. A full run executes them one by one (each sweep uses
    every core); a quick run, whose sweeps decode in the kernel (no pool to start for a
    few utterances), runs one notebook per core, each kernel with one thread. With several
    at once, those not started when one fails are not run.

    The notebooks' sweeps use the record store (:mod:`simul.sweep.store`) unless ``store`` is
    False: the kernels run with ``SIMUL_STORE`` set to this process's store (absolute: the
    kernels run in ``notebooks/``) or ``off``.

    Their sweeps decode on ``device`` (default: ``$SIMUL_DEVICE``, else the CPU): the kernels
    run with ``SIMUL_DEVICE`` set to it. A device torch cannot reach is refused before any
    notebook runs (only its name with ``dask_scheduler``: the workers have the GPUs)."""
    from simul.models import device as devices

    overrides = _overrides(notebooks(only), model, parameters or {}, parameters_file)
    if device is None:
        device = os.environ.get(DEVICE_ENV, "").strip() or None
        asked = f"{DEVICE_ENV}={devices.normalize(device)}"
    else:
        asked = f"--device {devices.normalize(device)}"
    device = (devices.parse if dask_scheduler else devices.check)(device, asked)
    root = store_module.location() if store else None
    saved = {name: os.environ.get(name) for name in (store_module.ENV, DEVICE_ENV)}
    os.environ[store_module.ENV] = "off" if root is None else str(root.absolute())
    os.environ[DEVICE_ENV] = device
    try:  # the kernels inherit them
        return _run(only, quick=quick, figures_dir=figures_dir, executed_dir=executed_dir,
                    runs_dir=runs_dir, corpus=corpus, dask_scheduler=dask_scheduler,
                    max_utterances=max_utterances, jobs=jobs, overrides=overrides, log=log)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _overrides(chosen: list[Notebook], model: str | None, parameters: dict,
               parameters_file: str | Path | None) -> dict[str, dict]:
    """{notebook name: the parameters it is given beyond the common ones}: ``model`` as its
    :attr:`Notebook.model_param`, then those of ``parameters`` it has. Refuses, before any
    notebook runs, a model for a notebook without a model parameter and a parameter no
    chosen notebook has."""
    where = f"--parameters {parameters_file}" if parameters_file else "parameters"
    names = {nb.name: notebook_parameters(nb) for nb in chosen}
    unknown = sorted(set(parameters) - {n for have in names.values() for n in have})
    if unknown:
        raise ValueError(f"{where}: no parameter {', '.join(map(repr, unknown))} in "
                         f"{', '.join(names)} (see their parameters cells)")
    if model is not None:
        without = [nb.name for nb in chosen if nb.model_param is None]
        if without:
            raise ValueError(f"--model: {', '.join(without)} compare several models (no one "
                             "model parameter): set them in a parameters file "
                             "(--parameters FILE.yaml), or leave them out with --only")
    out = {}
    for nb in chosen:
        given = {nb.model_param: model} if model is not None else {}
        given.update({k: v for k, v in parameters.items() if k in names[nb.name]})
        out[nb.name] = given
    return out


def _run(only: list[str] | None, *, quick: bool, figures_dir: str | Path,
         executed_dir: str | Path, runs_dir: str | Path, corpus: str | None,
         dask_scheduler: str | None, max_utterances: int | None, jobs: int | None,
         overrides: dict[str, dict] | None = None, log) -> dict[str, Path]:
    figures_dir, executed_dir = Path(figures_dir), Path(executed_dir)
    if max_utterances is not None and (quick or max_utterances < 1):
        raise ValueError("max_utterances: a positive number, and not with quick")
    if jobs is not None and jobs < 1:
        raise ValueError(f"jobs: a positive number, got {jobs}")
    runs_dir = Path(runs_dir) / ("quick" if quick else
                                 f"n{max_utterances}" if max_utterances else "full")
    executed_dir.mkdir(parents=True, exist_ok=True)
    chosen = notebooks(only)
    jobs = min(jobs or ((os.cpu_count() or 1) if quick else 1), len(chosen))
    work = []
    for nb in chosen:
        params = {"figures_dir": str((figures_dir / nb.name).resolve()),
                  "runs_dir": str((runs_dir / nb.name).resolve()),
                  "quick": quick, "quick_utterances": QUICK_UTTERANCES,
                  "dask_scheduler": dask_scheduler,
                  "workers": 1 if quick else None}  # a few utterances: no pool to start
        if corpus:
            params["corpus"] = str(Path(corpus).resolve())
        if max_utterances:
            params["max_utterances"] = max_utterances
        params.update(nb.batch)
        params.update((overrides or {}).get(nb.name, {}))
        work.append((nb, executed_dir / nb.file, params))

    def finished(nb: Notebook, out: Path, seconds: float) -> None:
        log(f"[{nb.name}] {seconds:.0f} s → {out}, {figures_dir / nb.name}/")
        _save_seconds(runs_dir, nb.name, seconds)

    if jobs == 1:
        for nb, out, params in work:
            log(f"[{nb.name}] {nb.what}")
            finished(nb, out, _execute(nb.file, out, params, quick, None))
        return {nb.name: out for nb, out, _ in work}
    threads = max(1, (os.cpu_count() or 1) // jobs)
    with cf.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        running = {}
        for nb, out, params in work:
            log(f"[{nb.name}] {nb.what}")
            running[pool.submit(_execute, nb.file, out, params, quick, threads)] = (nb, out)
        try:
            for fut in cf.as_completed(running):
                nb, out = running[fut]
                finished(nb, out, fut.result())
        except BaseException:
            for fut in running:
                fut.cancel()
            raise
    return {nb.name: out for nb, out, _ in work}


def _save_seconds(runs_dir: Path, name: str, seconds: float) -> None:
    """Add a notebook's wall time to ``<runs_dir>/seconds.json`` ({name: seconds}, the last
    run of each), which ``benchmarks/reproduce_profile.py`` reads."""
    path = runs_dir / "seconds.json"
    try:
        times = json.loads(path.read_text())
    except (OSError, ValueError):
        times = {}
    times[name] = round(seconds, 1)
    runs_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".seconds.json.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(times, indent=1) + "\n")
    tmp.replace(path)


def main_reproduce(only: list[str] | None, *, quick: bool, figures_dir: str | None,
                   executed_dir: str | None, runs_dir: str | None, corpus: str | None,
                   dask_scheduler: str | None, max_utterances: int | None = None,
                   jobs: int | None = None, store: bool = True,
                   device: str | None = None, model: str | None = None,
                   parameters_file: str | None = None) -> int:
    t0 = time.perf_counter()
    parameters = read_parameters(parameters_file) if parameters_file else None
    run(only, quick=quick, figures_dir=figures_dir or FIGURES_DIR,
        executed_dir=executed_dir or EXECUTED_DIR, runs_dir=runs_dir or RUNS_DIR,
        corpus=corpus, dask_scheduler=dask_scheduler, max_utterances=max_utterances,
        jobs=jobs, store=store, device=device, model=model, parameters=parameters,
        parameters_file=parameters_file)
    print(f"done in {(time.perf_counter() - t0) / 60:.1f} min: executed notebooks in "
          f"{executed_dir or EXECUTED_DIR}, figures and tables in {figures_dir or FIGURES_DIR}")
    table = claims_summary(figures_dir or FIGURES_DIR, only)
    if not table.empty:
        with pd.option_context("display.width", 200, "display.max_rows", 500,
                               "display.max_colwidth", 70):
            print(f"\nThe papers' claims on this run ({verdict_counts(table)}):")
            print(table.to_string(index=False))
        if not quick and (table.verdict == "undecided").any():
            print("\nsimul reproduce --confirm (make confirm) decides the undecided claims "
                  "again on fresh segments, as many as each needs")
    return 0


def claims_summary(figures_dir: str | Path = FIGURES_DIR,
                   only: list[str] | None = None) -> pd.DataFrame:
    """Every saved claim of the ``only`` notebooks (all by default): notebook, id, kind
    (:data:`simul.analysis.claims.KINDS`, or "property"), verdict, effect [interval] on n segments
    (95 %; 90 % for an equivalence claim), the segments an undecided claim would need."""
    rows = []
    for nb in notebooks(only):
        path = Path(figures_dir) / nb.name / "claims.csv"
        if not path.is_file() or path.stat().st_size <= 1:
            continue
        for r in pd.read_csv(path).itertuples():
            measured = not pd.isna(r.effect)
            rows.append({"notebook": nb.name, "claim": r.id,
                         "kind": getattr(r, "kind", ""), "verdict": r.verdict,
                         "effect [95 % interval]": f"{r.effect:+.1f} [{r.low:+.1f}, "
                         f"{r.high:+.1f}]" if measured else "",
                         "n": int(r.n) if measured else "",
                         "needs n": "" if pd.isna(r.needs_more) else int(r.needs_more)})
    return pd.DataFrame(rows)


def verdict_counts(table: pd.DataFrame) -> str:
    """"12 hold, 3 contradicted, 9 undecided" (", 2 not measured" when some are), and in a
    quick run ", 5 not decided (quick run)" for the claims that need the full run
    (:data:`simul.analysis.claims.QUICK_UNDECIDED`)."""
    from simul.analysis.claims import counts

    return counts(table.verdict)
