"""``zeroe-perturb`` command line: stream text (one sample per line) or JSONL through an attacker, or run the
experiment (``zeroe-perturb experiment --preset demo``, the same as ``python -m zeroe_perturb.experiment``).

    echo "Adversarial attacks are harmless." | zeroe-perturb --attack visual --p 0.5 --seed 0
    zeroe-perturb --attack intrude --p 0.8 --seed 1 --jsonl --field text -i in.jsonl -o out.jsonl
    zeroe-perturb experiment --preset demo --out DIR

Line ``i`` (0-based) uses ``item_seed(i, seed=seed)``: output is reproducible and equals
``perturb_batch(lines, attack, p, seed=seed)``.

A bad argument, a missing or unreadable file and malformed JSONL print ``zeroe-perturb: error: ...`` and exit
with status 2 (no traceback); nothing is written to ``--output`` then.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ._api import ATTACKS, get_attacker
from .protocol import check_p, item_seed


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="zeroe-perturb", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--attack", "-a", choices=ATTACKS, help="attacker name")
    ap.add_argument("--p", type=float, default=0.5, help="perturbation probability in [0, 1] (default 0.5)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--input", "-i", type=Path, help="input file (default: stdin)")
    ap.add_argument("--output", "-o", type=Path, help="output file (default: stdout; written atomically)")
    ap.add_argument("--jsonl", action="store_true", help="JSON Lines input (implied by a .jsonl input file)")
    ap.add_argument("--field", default="text", help="JSONL field to perturb (default: text)")
    ap.add_argument("--output-field", help="JSONL field to write (default: overwrite --field)")
    ap.add_argument("--report", action="store_true",
                    help="JSONL: add zeroe_n_attacked / zeroe_edit_distance fields")
    ap.add_argument("--list", action="store_true", help="list the attackers and exit")
    return ap


class _InputError(Exception):
    """Bad input data (reported as ``zeroe-perturb: error: ...``, exit status 2)."""


def _fail(message: str) -> None:
    print(f"zeroe-perturb: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] == ["experiment"]:
        from .experiment.__main__ import main as experiment_main

        return experiment_main(args[1:], prog="zeroe-perturb experiment")
    from robustsuite_common.threads import use_threads

    use_threads()  # one intra-op thread unless ROBUSTSUITE_THREADS says otherwise: same numbers on any machine
    try:
        return _main(args)
    except _InputError as e:
        _fail(str(e))
    except UnicodeDecodeError as e:
        _fail(f"the input is not UTF-8 text ({e.reason} at byte {e.start})")
    except OSError as e:  # a missing input file, an output directory that does not exist, no permission
        _fail(f"{e.strerror or type(e).__name__}: {e.filename}" if e.filename else str(e))
    return 2  # pragma: no cover - _fail raises


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.list:
        print("\n".join(ATTACKS))
        return 0
    if args.attack is None:
        _parser().error("--attack is required (one of: " + ", ".join(ATTACKS) + ")")
    try:
        p = check_p(args.p)
    except (TypeError, ValueError) as e:
        _parser().error(str(e))
    attacker = get_attacker(args.attack)
    jsonl = args.jsonl or (args.input is not None and args.input.suffix == ".jsonl")
    if args.input is not None and not args.input.is_file():
        _parser().error(f"--input {args.input}: no such file")
    if args.output is not None and not args.output.parent.is_dir():
        _parser().error(f"--output {args.output}: directory {args.output.parent} does not exist")
    src = open(args.input, encoding="utf-8") if args.input else sys.stdin  # noqa: SIM115
    tmp = None
    if args.output:
        tmp = args.output.with_name(f".{args.output.name}.{os.getpid()}.tmp")
        dst = open(tmp, "w", encoding="utf-8")  # noqa: SIM115
    else:
        dst = sys.stdout
    try:
        for i, line in enumerate(src):
            if jsonl:
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    raise _InputError(f"line {i + 1}: invalid JSON ({e.msg} at column {e.colno})") from None
                if not isinstance(obj, dict):
                    raise _InputError(f"line {i + 1}: expected a JSON object, got {type(obj).__name__}")
                if args.field not in obj or not isinstance(obj[args.field], str):
                    raise _InputError(f"line {i + 1}: field {args.field!r} missing or not a string")
                r = attacker(obj[args.field], p, seed=item_seed(i, seed=args.seed))
                obj[args.output_field or args.field] = r.perturbed
                if args.report:
                    obj["zeroe_n_attacked"] = r.n_attacked
                    obj["zeroe_edit_distance"] = r.edit_distance
                dst.write(json.dumps(obj, ensure_ascii=False) + "\n")
            else:
                body = line[:-1] if line.endswith("\n") else line
                new = attacker(body, p, seed=item_seed(i, seed=args.seed)).perturbed
                dst.write(new + ("\n" if line.endswith("\n") else ""))
            if dst is sys.stdout:
                dst.flush()
    except BaseException:
        if tmp is not None:
            dst.close()
            tmp.unlink(missing_ok=True)
            tmp = None
        raise
    finally:
        if args.input:
            src.close()
        if tmp is not None:
            dst.close()
    if tmp is not None:
        assert args.output is not None  # tmp is set only with --output
        os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
