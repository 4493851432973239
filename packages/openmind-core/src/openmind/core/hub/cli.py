"""CLI verbs ``pull``, ``push``, ``rm`` and ``cache``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from openmind.core.cli.command import Command

HUB_HELP = "hub name (modelers, huggingface, modelscope, local); default: id prefix, OPENMIND_HUB, then modelers"
IDS_HELP = """ids:
  org/name                 on the default hub (--hub, OPENMIND_HUB, else modelers)
  hf::org/name             Hugging Face      (endpoint: --endpoint or HF_ENDPOINT)
  om::org/name             Modelers          (endpoint: --endpoint or OPENMIND_HUB_ENDPOINT)
  ms::org/name             ModelScope        (endpoint: --endpoint or MODELSCOPE_DOMAIN)
  local::org/name          a local mirror    (root: --endpoint or OPENMIND_LOCAL_HUB)
  file:///mirror/org/name  a local mirror folder

environment:
  OPENMIND_CACHE      cache folder (default ~/.cache/openmind); files live in $OPENMIND_CACHE/hub
  OPENMIND_OFFLINE=1  resolve from the cache only, never touch the network
  OPENMIND_HUB_WORKERS / OPENMIND_HUB_RETRIES   parallel downloads (8) / retries per file (5)"""


def _add_hub_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hub", help=HUB_HELP)
    parser.add_argument("--endpoint", help="the hub's URL (overrides the client's environment variable)")
    parser.add_argument(
        "--token", help="access token (default: the hub client's own: HF_TOKEN, OPENMIND_HUB_TOKEN, ...)"
    )


def _size(n: int | float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _ago(ts: float) -> str:
    seconds = max(0.0, time.time() - ts)
    if seconds < 60:
        return f"{seconds:.0f} s ago"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 86400:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86400:.0f} days ago"


class PullCommand(Command):
    description = "Download a model (all files, or those matching --include/--exclude) from a hub."
    epilog = (
        "examples:\n"
        "  openmind pull hf::org/tiny-llama\n"
        "  openmind pull om::PyTorch-NPU/t5_small --revision main --include '*.json' '*.safetensors'\n"
        "  openmind pull hf::org/name --local-dir ./model     # plain files in ./model\n\n"
        "Downloads are parallel, resumable (run the same pull again after an interruption) and checked against\n"
        "the hub's sizes and checksums; a file appears under its final name only when complete.\n"
        "The last line printed is the local folder.\n\n" + IDS_HELP
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model_id", metavar="ID", help="repository id, e.g. hf::org/name (see below)")
        parser.add_argument("--revision", help="branch, tag or commit (default: the hub's default branch)")
        parser.add_argument(
            "--include", nargs="+", action="extend", metavar="PATTERN", help="only files matching these globs"
        )
        parser.add_argument(
            "--exclude", nargs="+", action="extend", metavar="PATTERN", help="skip files matching these globs"
        )
        parser.add_argument("--local-dir", help="write plain files into this folder instead of the cache")
        parser.add_argument("--workers", type=int, help="parallel downloads (default 8, OPENMIND_HUB_WORKERS)")
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
        _add_hub_options(parser)

    def run(self, args: argparse.Namespace) -> int:
        from openmind.core.hub import pull

        folder = pull(
            args.model_id,
            revision=args.revision,
            hub=args.hub,
            include=args.include,
            exclude=args.exclude,
            local_dir=args.local_dir,
            endpoint=args.endpoint,
            token=args.token,
            workers=args.workers,
            progress=False if args.quiet else None,
        )
        print(folder)
        return 0


class PushCommand(Command):
    description = "Upload a folder to a hub repository as one commit (the repository is created if missing)."
    epilog = "examples:\n  openmind push ./out/sft me/my-model --hub huggingface -m 'SFT run 3'\n\n" + IDS_HELP

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("folder", help="folder to upload")
        parser.add_argument("repo_id", metavar="ID", help="repository id, e.g. hf::me/my-model")
        parser.add_argument("-m", "--message", help="commit message (default: 'Upload FOLDER with openmind')")
        parser.add_argument("--revision", help="branch to commit to (default: the hub's default branch)")
        parser.add_argument("--private", action="store_true", help="create the repository as private")
        parser.add_argument(
            "--include", nargs="+", action="extend", metavar="PATTERN", help="only files matching these globs"
        )
        parser.add_argument(
            "--exclude", nargs="+", action="extend", metavar="PATTERN", help="skip files matching these globs"
        )
        _add_hub_options(parser)

    def run(self, args: argparse.Namespace) -> int:
        from openmind.core.hub import push

        result = push(
            args.folder,
            args.repo_id,
            hub=args.hub,
            revision=args.revision,
            message=args.message,
            private=args.private,
            include=args.include,
            exclude=args.exclude,
            endpoint=args.endpoint,
            token=args.token,
        )
        print(f"pushed {args.folder} -> {args.repo_id}: {result}")
        return 0


class RmCommand(Command):
    description = "Remove a model from the local cache; with --remote, delete the repository on the hub instead."
    epilog = (
        "examples:\n  openmind rm hf::org/name              # frees the cache\n  openmind rm om::me/old-model --remote --yes\n\n"
        + IDS_HELP
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("model_id", metavar="ID", help="repository id, e.g. hf::org/name")
        parser.add_argument("--remote", action="store_true", help="delete the repository on the hub (irreversible)")
        parser.add_argument("--yes", action="store_true", help="confirm --remote without asking")
        _add_hub_options(parser)

    def run(self, args: argparse.Namespace) -> int:
        from openmind.core.errors import A_MISSING
        from openmind.core.hub import rm

        if args.remote and not args.yes:
            if not sys.stdin.isatty():
                raise A_MISSING.error("rm --remote deletes the repository on the hub; pass --yes to confirm")
            answer = input(f"Delete {args.model_id} on the hub? This cannot be undone. [y/N] ")
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing deleted")
                return 1
        result = rm(args.model_id, hub=args.hub, remote=args.remote, endpoint=args.endpoint, token=args.token)
        if "deleted" in result:
            print(f"deleted {result['deleted']} on the hub")
        else:
            for path in result["removed"]:
                print(f"removed {path}")
            print(f"freed {_size(result['freed'])}")
        return 0


class CacheCommand(Command):
    description = "Inspect and tidy the download cache ($OPENMIND_CACHE/hub, one layout for every hub)."
    epilog = (
        "examples:\n"
        "  openmind cache ls                       # repos: size, revisions, last used, partial downloads\n"
        "  openmind cache verify                   # re-hash every file; non-zero exit on a problem\n"
        "  openmind cache verify hf::org/name\n"
        "  openmind cache clean --incomplete       # drop partial downloads\n"
        "  openmind cache clean --older-than 30    # drop repos unused for 30 days\n"
        "  openmind cache clean hf::org/name       # drop one repo (same as `openmind rm`)"
    )

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("action", choices=("ls", "verify", "clean"), help="what to do")
        parser.add_argument("ids", nargs="*", metavar="ID", help="restrict to these repositories")
        parser.add_argument("--hub", help=HUB_HELP)
        parser.add_argument("--json", action="store_true", help="machine-readable output")
        parser.add_argument("--older-than", type=float, metavar="DAYS", help="clean: repos not used for DAYS days")
        parser.add_argument("--incomplete", action="store_true", help="clean: only partial downloads")
        parser.add_argument("--all", action="store_true", help="clean: every repository")
        parser.add_argument("--dry-run", action="store_true", help="clean: show what would be removed")

    def _repos(self, args):
        from openmind.core.hub import cache as C
        from openmind.core.hub.ids import parse

        repos = C.scan()
        if args.ids:
            wanted = {(h.hub, h.repo_id) for h in (parse(i, args.hub) for i in args.ids)}
            missing = wanted - {(r.hub, r.repo_id) for r in repos}
            if missing:
                from openmind.core.hub.errors import H_NOT_CACHED

                names = ", ".join(f"{h}:{r}" for h, r in sorted(missing))
                raise H_NOT_CACHED.error(
                    f"not in the cache {C.hub_root()}: {names}", hint="`openmind cache ls` lists what is cached."
                )
            repos = [r for r in repos if (r.hub, r.repo_id) in wanted]
        elif args.hub:
            from openmind.core.hub.ids import find_hub_spec

            name = find_hub_spec(args.hub).name
            repos = [r for r in repos if r.hub == name]
        return repos

    def run(self, args: argparse.Namespace) -> int:
        return getattr(self, f"_{args.action}")(args)

    def _ls(self, args) -> int:
        from openmind.core.hub import cache as C
        from openmind.core.tables import text_table

        repos = self._repos(args)
        if args.json:
            print(json.dumps([r.to_dict() for r in repos], indent=1))
            return 0
        if not repos:
            print(f"the cache {C.hub_root()} is empty")
            return 0
        rows = []
        for r in repos:
            refs = ", ".join(f"{k}={v[:10]}" for k, v in sorted(r.refs.items())) or ", ".join(c[:10] for c in r.commits)
            partial = _size(r.partial_bytes) if r.partial_bytes else ""
            rows.append([r.hub, r.repo_id, _size(r.size), r.files, refs, _ago(r.last_used), partial])
        print(text_table(["hub", "repository", "size", "files", "revisions", "last used", "partial"], rows))
        total = sum(r.size for r in repos)
        print(f"\n{len(repos)} repositories, {_size(total)} in {C.hub_root()}")
        return 0

    def _verify(self, args) -> int:
        from openmind.core.hub import cache as C

        results = [check for repo in self._repos(args) for check in C.verify(repo)]
        if args.json:
            print(json.dumps([c.to_dict() for c in results], indent=1))
        else:
            for c in results:
                if c.state != "ok":
                    where = f"{c.repo}@{c.commit[:10]}" if c.commit else c.repo
                    print(f"{c.state.upper():8} {where} {c.path}: {c.detail}")
            counts = {s: sum(1 for c in results if c.state == s) for s in ("ok", "corrupt", "missing", "partial")}
            print(", ".join(f"{n} {s}" for s, n in counts.items()) + f" ({len(results)} files checked)")
        return 0 if all(c.state == "ok" for c in results) else 1

    def _clean(self, args) -> int:
        from openmind.core.errors import A_MISSING
        from openmind.core.hub import cache as C

        if not (args.ids or args.all or args.incomplete or args.older_than is not None):
            raise A_MISSING.error("cache clean needs what to remove: IDs, --incomplete, --older-than DAYS or --all")
        freed = 0
        for repo in self._repos(args):
            if args.incomplete:
                size = repo.partial_bytes
                if size:
                    print(
                        f"{'would remove' if args.dry_run else 'removed'} {_size(size)} of partial downloads in {repo.hub}:{repo.repo_id}"
                    )
                    freed += size if args.dry_run else C.remove_partials(repo)
                continue
            if args.older_than is not None and C.age_days(repo) < args.older_than:
                continue
            print(
                f"{'would remove' if args.dry_run else 'removed'} {repo.hub}:{repo.repo_id} ({_size(repo.size + repo.partial_bytes)})"
            )
            freed += repo.size + repo.partial_bytes if args.dry_run else C.remove_repo(repo)
        print(f"{'would free' if args.dry_run else 'freed'} {_size(freed)}")
        return 0
