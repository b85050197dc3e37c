"""Nothing leaves the machine: the test apiserver calls webhooks and aggregated APIs on
loopback only. Anything else (a Service's ClusterIP, a URL's host name) is refused by the
control plane's egress proxy at once, named unresolved in the error: no DNS lookup, no
connection attempt off the machine. A webhook on loopback is called as usual."""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from testenv import JSON, Cluster, KubeError, wait_for
from testenv.egress import REFUSED

GROUP = "loopback-only.testenv.upgrade-guard.dev"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"


@pytest.fixture
def webhook(cluster: Cluster, namespace: str) -> Iterator[JSON]:
    """A ValidatingWebhookConfiguration on ConfigMaps of this test's namespace only, for the
    test to give a ``clientConfig``; removed afterwards."""
    config: JSON = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": namespace},
        "webhooks": [
            {
                "name": f"configmaps.{GROUP}",
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["configmaps"],
                    }
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            }
        ],
    }
    try:
        yield config
    finally:
        cluster.admin.delete(f"{WEBHOOKS}/{namespace}")


def install(cluster: Cluster, config: JSON, client_config: JSON) -> None:
    config["webhooks"][0]["clientConfig"] = client_config
    cluster.admin.create(WEBHOOKS, config)


def create_refusal(cluster: Cluster, namespace: str) -> str:
    """The apiserver's answer to creating a ConfigMap (dry run), once the webhook is in force."""

    def refused() -> str | None:
        try:
            cluster.admin.create(f"/api/v1/namespaces/{namespace}/configmaps",
                                 {"metadata": {"name": "probe"}}, dryRun="All")  # fmt: skip
        except KubeError as error:
            return error.message
        return None

    return str(wait_for(refused, timeout=30, what="the webhook to be called"))


def test_a_webhook_service_is_refused_by_its_cluster_ip_unresolved_and_at_once(
    cluster: Cluster, namespace: str, webhook: JSON
) -> None:
    service = cluster.admin.create(f"/api/v1/namespaces/{namespace}/services",
                                   {"metadata": {"name": "webhook"},
                                    "spec": {"ports": [{"port": 443}]}})  # fmt: skip
    address = f"{service['spec']['clusterIP']}:443"
    install(cluster, webhook, {"service": {"namespace": namespace, "name": "webhook"}})
    message = create_refusal(cluster, namespace)
    assert f'Post "https://webhook.{namespace}.svc:443/?timeout=10s"' in message, message
    assert f"while dialing {address}, code 403: 403 {REFUSED}" in message, message
    assert cluster.control_plane.egress is not None
    assert address in cluster.control_plane.egress.refused


def test_a_webhook_url_off_the_machine_is_refused_by_name_without_a_lookup(
    cluster: Cluster, namespace: str, webhook: JSON
) -> None:
    """The host name reaches the proxy as written: the apiserver resolved nothing."""
    install(cluster, webhook, {"url": f"https://hook.{GROUP}.invalid/validate",
                               "caBundle": ""})  # fmt: skip
    message = create_refusal(cluster, namespace)
    assert f"while dialing hook.{GROUP}.invalid:443, code 403: 403 {REFUSED}" in message, message


def test_a_webhook_on_loopback_is_called(cluster: Cluster, namespace: str, webhook: JSON) -> None:
    pki = cluster.control_plane.pki
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Denying)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(pki.serving_cert), str(pki.serving_key))
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ca = base64.b64encode(pki.ca_cert.read_bytes()).decode()
        install(cluster, webhook, {"url": f"https://127.0.0.1:{server.server_address[1]}/",
                                   "caBundle": ca})  # fmt: skip
        message = create_refusal(cluster, namespace)
    finally:
        server.shutdown()
        server.server_close()
    assert "denied the request: the loopback webhook saw ConfigMap probe" in message, message


class _Denying(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        seen = f"{request['kind']['kind']} {request['name']}"
        answer = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": request["uid"],
                "allowed": False,
                "status": {
                    "code": 403,
                    "message": f"the loopback webhook saw {seen}",
                },
            },
        }
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


def test_an_aggregated_api_on_a_service_is_refused(cluster: Cluster, namespace: str) -> None:
    """The aggregator checks an APIService's Service by calling it (once the Service has a
    ready endpoint, which no controller gives it here): refused, so it is unavailable."""
    a = cluster.admin
    service = {"metadata": {"name": "api"}, "spec": {"ports": [{"port": 443}]}}
    created = a.create(f"/api/v1/namespaces/{namespace}/services", service)
    address = f"{created['spec']['clusterIP']}:443"
    a.create(f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices", {
        "metadata": {"name": "api", "labels": {"kubernetes.io/service-name": "api"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["192.0.2.10"], "conditions": {"ready": True}}],
        "ports": [{"port": 443, "protocol": "TCP"}],
    })  # fmt: skip
    name = f"v1.{GROUP}"
    a.create(APISERVICES, {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": name},
        "spec": {"group": GROUP, "version": "v1", "insecureSkipTLSVerify": True,
                 "groupPriorityMinimum": 1000, "versionPriority": 15,
                 "service": {"namespace": namespace, "name": "api", "port": 443}},
    })  # fmt: skip

    def unavailable() -> str | None:
        status = a.get(f"{APISERVICES}/{name}").get("status") or {}
        for condition in status.get("conditions") or []:
            if condition["type"] == "Available" and REFUSED in condition.get("message", ""):
                return str(condition["message"])
        return None

    try:
        message = wait_for(unavailable, timeout=30, what="the APIService to be called")
    finally:
        a.delete(f"{APISERVICES}/{name}")
        # An unavailable group left in discovery would fail later tests' helm and kubectl.
        wait_for(lambda: all(g["name"] != GROUP for g in a.get("/apis")["groups"]),
                 timeout=30, what="the group to leave discovery")  # fmt: skip
    assert f"while dialing {address}, code 403" in message, message
