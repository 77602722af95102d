"""Static files storage for DEBUG=0: hashed, compressed names from collectstatic's manifest."""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ManifestStaticFilesStorage(CompressedManifestStaticFilesStorage):
    """Falls back to the plain name for a file missing from the manifest.

    `make serve` collects static files before it starts; a server started some other way
    without that still renders its pages (WhiteNoise then serves the files from the apps'
    folders through the finders) instead of answering 500 on every page.
    """

    def stored_name(self, name: str) -> str:
        try:
            return super().stored_name(name)
        except ValueError:
            return name
