package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/surveyor-dev/surveyor/internal/golden"
)

// carto runs the plugin with args and returns its exit code, stdout and stderr.
func carto(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	// No kubeconfig: the offline commands must not need one.
	t.Setenv("KUBECONFIG", "/nonexistent")
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The offline commands over the samples, with their exit codes and output.
func TestOffline(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"render-samples", []string{"render", "-f", "../../samples"}, 1, "error: 1 of 5 owners could not be rendered in full (see the comments)\n"},
		{"render-delivery-observed", []string{"render", "-f", "../../samples", "deliverable/hello-delivered", "--observed", "testdata/observed-deployment.yaml"}, 0, ""},
		{"render-input", []string{"render", "-f", "../../samples", "deliverable/hello-delivered", "--input", "deployer.url=https://example.com/x.git", "--input", "deployer.revision=v2"}, 0, ""},
		{"lint-samples", []string{"lint", "-f", "../../samples"}, 1, "error: 1 problem in 26 documents\n"},
		{"lint-rule", []string{"lint", "-f", "../../samples", "--rule", "ClusterTemplate/app-deployment", "--object", "testdata/observed-deployment.yaml"}, 0, ""},
		{"test-samples", []string{"test", "../../tests/templates"}, 0, "10 cases passed\n"},
		{"test-failing", []string{"test", "../../pkg/templatetest/testdata/suite"}, 1, "error: 1 of 6 cases failed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := carto(t, tt.args...)
			if code != tt.code || errOut != tt.stderr {
				t.Errorf("exit %d, stderr %q; want exit %d, stderr %q", code, errOut, tt.code, tt.stderr)
			}
			golden.Check(t, "testdata/"+tt.name+".golden", out)
		})
	}
}

// Errors are one line on stderr and a non-zero exit.
func TestErrors(t *testing.T) {
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"get", "--kubeconfig=/nonexistent"}, "error: reading the kubeconfig: stat /nonexistent: no such file or directory\n"},
		{[]string{"wait", "app", "--for=done"}, "error: --for must be ready, available or complete, not \"done\"\n"},
		{[]string{"get", "pod/x"}, "error: \"pod/x\": the kind must be one of workload, deliverable, runnable\n"},
		{[]string{"get", "runnables", "-w"}, "error: --watch follows one runnable: name it (runnable/NAME)\n"},
		{[]string{"render"}, "error: name the owner, blueprint and template files with -f\n"},
		{[]string{"render", "-f", "../../samples", "--input", "nodot=1"}, "error: --input \"nodot=1\": want RESOURCE.OUTPUT=VALUE, e.g. image-provider.image=registry.example/app:1\n"},
		{[]string{"lint", "-f", "/nonexistent"}, "error: lstat /nonexistent: no such file or directory\n"},
		{[]string{"frobnicate"}, "error: unknown command \"frobnicate\" for \"kubectl carto\"\n"},
	}
	for _, tt := range tests {
		code, out, errOut := carto(t, tt.args...)
		if code != 1 || errOut != tt.stderr || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1, stderr %q", tt.args, code, out, errOut, tt.stderr)
		}
	}
}

// A kind the cluster does not serve is a missing CRD; a denial names the permission.
func TestExplain(t *testing.T) {
	gr := schema.GroupResource{Group: "carto.run", Resource: "workloads"}
	tests := []struct {
		err  error
		want string
	}{
		// What client-go makes of the API server's 404 for a resource it does not serve.
		{apierrors.NewGenericServerResponse(http.StatusNotFound, "get", gr, "app", "", 0, true),
			"the cluster does not serve workloads.carto.run (carto.run/v1alpha1): is Surveyor installed? Its CRDs are in config/crd"},
		{apierrors.NewNotFound(gr, "app"), `workload "app" not found in namespace dev`},
		{apierrors.NewForbidden(gr, "app", errors.New(`User "jane" cannot get resource "workloads"`)),
			`not allowed by RBAC: workloads.carto.run "app" is forbidden: User "jane" cannot get resource "workloads"`},
	}
	for _, tt := range tests {
		if got := explain(tt.err, workloads, "dev", "app").Error(); got != tt.want {
			t.Errorf("explain(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// web checks its address before it reads the kubeconfig or listens.
func TestWebAddress(t *testing.T) {
	code, _, stderr := carto(t, "web", "--address", "8080")
	if want := "error: --address \"8080\": address 8080: missing port in address\n"; code != 1 || stderr != want {
		t.Errorf("exit %d, stderr %q; want 1, %q", code, stderr, want)
	}
}

// The Host check of the web view allows the address it listens on, never any name but
// localhost by default.
func TestListenHosts(t *testing.T) {
	for address, want := range map[string][]string{
		"127.0.0.1:8080":        nil,
		"localhost:8080":        nil,
		"[::1]:8080":            nil,
		"10.1.2.3:8080":         {"10.1.2.3"},
		"[fd00::5]:8080":        {"fd00::5"},
		"carto.example.ts:8080": {"carto.example.ts"},
	} {
		got, err := listenHosts(address)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("listenHosts(%q) = %q, %v; want %q", address, got, err, want)
		}
	}
	// A wildcard address allows this machine's addresses, and only addresses.
	got, err := listenHosts("0.0.0.0:8080")
	if err != nil || !slices.Contains(got, "127.0.0.1") {
		t.Errorf("listenHosts(0.0.0.0:8080) = %q, %v; want this machine's addresses", got, err)
	}
	for _, h := range got {
		if net.ParseIP(h) == nil {
			t.Errorf("listenHosts(0.0.0.0:8080) allows the name %q", h)
		}
	}
}
