"""pvpython test: the octoflow plugin loads through PV_PLUGIN_PATH (set by the test) without a
LoadPlugin call, and again by path; every proxy it declares is created; every property in its
server-manager XML has a documentation string.

Arguments: plugin library, the plugin's server-manager XML."""
import os
import sys
from xml.etree import ElementTree

from paraview import servermanager
import paraview.simple as simple

plugin_path, xml_path = sys.argv[1:3]
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAILED: " + message)


# Through PV_PLUGIN_PATH: the proxies are there before any LoadPlugin.
check(os.environ.get("PV_PLUGIN_PATH") == os.path.dirname(plugin_path), "PV_PLUGIN_PATH is not the plugin's folder")
declared = ElementTree.parse(xml_path).getroot()
groups = {group.get("name"): [proxy.get("name") for proxy in group] for group in declared.findall("ProxyGroup")}
for group, names in groups.items():
    for name in names:
        proxy = servermanager.ProxyManager().NewProxy(group, name)
        check(proxy is not None, "proxy %s/%s not created through PV_PLUGIN_PATH" % (group, name))
check(hasattr(simple, "octoflowCase") or "octoflowCase" in dir(simple), "paraview.simple has no octoflowCase")
# By path as well (a second load is harmless).
simple.LoadPlugin(plugin_path, ns=globals())
for function in ("octoflowCase", "octoflowCheckpoint", "InterfaceMetrics"):
    check(function in globals(), "LoadPlugin gave no %s" % function)

# Every property a user sees is documented.
for proxy in declared.iter():
    if not proxy.tag.endswith("Proxy"):
        continue
    for prop in proxy:
        if prop.tag.endswith("Property") and prop.get("information_only") != "1" and prop.get("panel_visibility") != "never":
            documentation = prop.find("Documentation")
            check(documentation is not None and documentation.text and documentation.text.strip(),
                  "%s.%s has no documentation" % (proxy.get("name"), prop.get("name")))

if failures:
    sys.exit("%d check(s) failed" % len(failures))
print("passed: %s" % ", ".join("%s/%s" % (group, name) for group, names in groups.items() for name in names))
