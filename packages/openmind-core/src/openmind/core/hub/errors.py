"""Coded errors of the hubs (``OM-H0xx``)."""

from __future__ import annotations

from openmind.core.errors import HubError, define

H_UNKNOWN_HUB = define(
    "OM-H001",
    "Unknown hub",
    "Use a registered hub (`openmind list hubs`): --hub modelers|huggingface|modelscope|local, "
    "OPENMIND_HUB, or an id prefix such as hf::org/name, ms::org/name, om::org/name.",
    HubError,
)
H_BAD_ID = define(
    "OM-H002",
    "Invalid repository id",
    "A repository id looks like 'org/name' (letters, digits, '-', '_', '.'), optionally with a hub prefix "
    "such as 'hf::org/name'.",
    HubError,
)
H_REPO_NOT_FOUND = define(
    "OM-H003",
    "Repository not found",
    "Check the id and the hub (--hub); a private repository also answers 'not found' without a token "
    "(--token or the hub client's token variable).",
    HubError,
)
H_REVISION_NOT_FOUND = define(
    "OM-H004",
    "Revision not found",
    "Check --revision: a branch, tag or commit that exists in the repository.",
    HubError,
)
H_GATED = define(
    "OM-H005",
    "Gated repository",
    "Request access on the hub's page of the repository, then pass a token of the account that has access.",
    HubError,
)
H_UNAUTHORISED = define(
    "OM-H006",
    "Unauthorised",
    "Pass a valid token with --token (or the hub client's token variable: HF_TOKEN, OPENMIND_HUB_TOKEN, "
    "MODELSCOPE_API_TOKEN); writing (push, rm --remote) needs a write token.",
    HubError,
)
H_FILE_NOT_FOUND = define(
    "OM-H007",
    "File not found in the repository",
    "Check --include/--exclude patterns and the file names (`openmind pull` lists what the repository has).",
    HubError,
)
H_UNSAFE_PATH = define(
    "OM-H008",
    "Unsafe file name from the hub",
    "The hub listed a file whose name would escape the target folder ('..', an absolute path or a symlink "
    "pointing outside); nothing was written for it. Report the repository to the hub.",
    HubError,
)
H_INTEGRITY = define(
    "OM-H009",
    "Downloaded file does not match the hub's checksum",
    "The file was fetched again and still did not match; retry later, or report the repository if it "
    "persists (a mirror or proxy may be altering it).",
    HubError,
)
H_NETWORK = define(
    "OM-H010",
    "Hub unreachable",
    "Check the network and the endpoint (--endpoint or the hub's endpoint variable); a partial download "
    "resumes when you run the same pull again. OPENMIND_OFFLINE=1 uses the cache only.",
    HubError,
)
H_NOT_CACHED = define(
    "OM-H011",
    "Not in the cache (offline)",
    "Offline mode resolves from the cache only: pull it once while online (unset OPENMIND_OFFLINE), or "
    "point OPENMIND_CACHE at a cache that has it (`openmind cache ls`).",
    HubError,
)
H_CLIENT = define(
    "OM-H012",
    "Unexpected answer from the hub",
    "The hub client failed in an unexpected way; retry, upgrade the client package, or report it with the log.",
    HubError,
)
H_BAD_FOLDER = define(
    "OM-H013",
    "Cannot push this folder",
    "Pass an existing folder with the files to upload (patterns: --include/--exclude).",
    HubError,
)
H_BAD_ENDPOINT = define(
    "OM-H014",
    "Invalid hub endpoint",
    "Pass a full URL with --endpoint or the hub's endpoint variable (Modelers needs https://; the local hub "
    "takes a folder or a file:// URL).",
    HubError,
)
H_CACHE = define(
    "OM-H015",
    "Cache problem",
    "Run `openmind cache verify` to see what is wrong, then `openmind cache clean` or pull again.",
    HubError,
)
H_UNSUPPORTED = define(
    "OM-H016",
    "Operation not supported by this hub",
    "This hub plugin cannot do that (e.g. a read-only mirror cannot take uploads); use another hub with --hub.",
    HubError,
)
