"""Importing and exporting links: `formats` reads other shorteners' files, `service` creates the
links with a report, `exports` writes them out."""
