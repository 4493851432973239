"""Images in ``openmind deploy``'s ``/v1/chat/completions`` (vision-language folders).

The deploy arguments (``openmind.core.args.DeployArguments``) set what one request may carry:

* ``data:`` URLs always; ``file://`` URLs and paths only under ``--media-root`` folders (none by
  default: the server never reads its own disk for a client unless told where);
* ``http(s)://`` URLs refused (OM-I307, a 400) unless ``--allow-remote-media``: then downloaded
  with the standard library's HTTP client, capped at ``--max-image-bytes``;
* at most ``--max-images`` images per request, ``--max-image-bytes`` bytes and ``--max-image-pixels``
  pixels each (OM-I306, a 400 naming the field, e.g. ``messages[2].content[1].image_url``).
"""

from __future__ import annotations

from typing import Any

from openmind.mm.vl.messages import MediaLimits

#: how long a remote image download may take (seconds)
FETCH_TIMEOUT = 20.0


def fetch(url: str, limit: int | None) -> bytes:
    """Download ``url`` (http/https only), reading at most ``limit + 1`` bytes."""
    import urllib.request

    request = urllib.request.Request(url, headers={"User-Agent": "openmind-deploy"})
    with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT) as response:  # noqa: S310 (scheme checked by the caller)
        return response.read(None if limit is None else limit + 1)


def limits_from(ns: Any) -> MediaLimits:
    """The :class:`MediaLimits` of resolved deploy arguments (defaults when the group is absent)."""
    from openmind.core.errors import A_BAD_VALUE

    media = ns.deploy
    for key in ("max_images", "max_image_bytes", "max_image_pixels"):
        if getattr(media, key) < 1:
            raise A_BAD_VALUE.error(f"{key}={getattr(media, key)} must be >= 1", location=f"--{key.replace('_', '-')}")
    return MediaLimits(
        max_images=media.max_images,
        max_image_bytes=media.max_image_bytes,
        max_image_pixels=media.max_image_pixels,
        file_roots=tuple(media.media_root),
        fetch=fetch if media.allow_remote_media else None,
    )
