"""No import circle inside an app: no module of an app imports, directly or through others, a
module that imports it back (imports inside functions included). grimp is import-linter's graph."""

import grimp

APPS = ("dynabench", "tasks", "annotation", "validation", "leaderboard", "console", "cycle", "community")


def test_no_import_circle_inside_an_app():
    graph = grimp.build_graph(*APPS, cache_dir=None)
    circles = []
    for app in APPS:
        modules = {m for m in graph.modules if m == app or m.startswith(app + ".")}
        for importer in sorted(modules):
            for imported in graph.find_modules_directly_imported_by(importer):
                if imported in modules and imported != importer:
                    chain = graph.find_shortest_chain(importer=imported, imported=importer)
                    if chain and all(m in modules for m in chain):
                        circles.append(" -> ".join((importer, *chain)))
    assert not circles, "\n".join(sorted(set(circles))[:20])
