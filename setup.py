"""The build's one rule beyond pyproject.toml: no wheel without the community page's assets.

They are built from web/ by scripts/setup (npm ci --prefix web, then node web/build.mjs) into
buzz_signer/web, which git ignores; a wheel without them would serve a page with no members
(SPEC section 10, "Installed as a package"). An editable install (scripts/setup's, made before
the assets) is not checked.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PAGE_MANIFEST = Path(__file__).resolve().parent / "buzz_signer" / "web" / "manifest.json"


class BuildWithThePage(build_py):
    def run(self) -> None:
        if not getattr(self, "editable_mode", False) and not PAGE_MANIFEST.is_file():
            raise SystemExit(
                "buzz_signer/web holds no page assets: build them first (scripts/setup, or"
                " npm ci --prefix web && node web/build.mjs), then build the package again"
            )
        super().run()


setup(cmdclass={"build_py": BuildWithThePage})
