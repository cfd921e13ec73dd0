"""What ``read`` (and ``search``/``find``) can open besides plain text files: one module per kind of source.

``selector`` splits the path string, ``archives`` and ``sqlite`` read with the standard library in a
worker thread, ``documents`` converts PDF/Office/EPUB/notebook/HTML files in a killable child
process, ``urls`` fetches with the host's HTTP client, ``resources`` resolves ``skill://`` and
``artifact://``, ``images`` checks and shrinks pictures. ``limits`` holds the byte and time bounds
they share. The modules that the search worker imports (``selector``, ``limits``, ``archives``) use
the standard library only.
"""
