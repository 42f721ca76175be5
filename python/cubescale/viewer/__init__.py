"""``cubescale view``: a report explored in the browser as Cube shows it (issue #29).

:mod:`~cubescale.viewer.model` answers the queries from the report's pane API,
:mod:`~cubescale.viewer.server` serves them and the page (``static/``) with aiohttp,
:mod:`~cubescale.viewer.notebook` shows the page inside a notebook. The server needs the
optional extra ``view`` (``pip install 'cubescale[view]'``); the model does not.

Example
-------
>>> import cubescale
>>> from cubescale.viewer.model import Explorer
>>> Explorer(cubescale.open(cubescale.examples.report_path())).report_summary()["file"]
'demo.cubex'
"""
