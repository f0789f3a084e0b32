package install

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/hack/cluster"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// serviceAccountDir is where client-go's in-cluster config reads the pod's token and CA.
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// The controller runs as its Deployment runs it, with nothing but what the release manifest
// gives it: the Deployment's args, the in-cluster config (KUBERNETES_SERVICE_HOST/PORT, and
// a token of the Deployment's ServiceAccount from the TokenRequest API with the CA and the
// namespace, mounted where client-go looks, in a mount namespace of its own), and only the
// manifest's RBAC. Its probes answer, and samples/ turns Ready under it (hello-web-prebuilt
// says SupplyChainNotFound, as it is meant to): the RBAC is enough.
func TestControllerRunsAsTheDeploymentRunsIt(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting the ServiceAccount's files where client-go looks takes root (a mount namespace)")
	}
	applyRelease(t, "registry.example/surveyor@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	var dep appsv1.Deployment
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: "surveyor-system", Name: "surveyor-controller"}, &dep); err != nil {
		t.Fatal(err)
	}
	// Nothing of the Deployment's runs here but this process: scale it to zero.
	if err := k8s.Patch(ctx, &dep, client.RawPatch(client.Merge.Type(), []byte(`{"spec":{"replicas":0}}`))); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Spec
	container := pod.Containers[0]

	// The pod's ServiceAccount volume: a bound token, the cluster's CA, the namespace.
	files := t.TempDir()
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	sa := &corev1.ServiceAccount{}
	sa.Namespace, sa.Name = dep.Namespace, pod.ServiceAccountName
	if err := k8s.SubResource("token").Create(ctx, sa, tr); err != nil {
		t.Fatalf("requesting a token for %s/%s: %v", sa.Namespace, sa.Name, err)
	}
	ca := env.Cluster.Config.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(env.Cluster.Config.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string][]byte{"token": []byte(tr.Status.Token), "ca.crt": ca, "namespace": []byte(dep.Namespace)} {
		if err := os.WriteFile(filepath.Join(files, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The Deployment's args, with its ports moved to free ones on loopback (this machine
	// is not a pod of its own).
	ports := map[string]string{}
	var args []string
	for _, a := range container.Args {
		if flag, addr, ok := strings.Cut(a, "="); ok && strings.HasSuffix(flag, "-bind-address") && strings.HasPrefix(addr, ":") {
			port, err := cluster.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			ports[addr] = "127.0.0.1:" + strconv.Itoa(port)
			a = flag + "=" + ports[addr]
		}
		args = append(args, a)
	}
	probe := container.ReadinessProbe.HTTPGet
	probeAddr := ports[":"+probe.Port.String()]
	if probeAddr == "" {
		t.Fatalf("the readiness probe's port %s is none of the args' %v", probe.Port.String(), container.Args)
	}
	host, port, _ := strings.Cut(strings.TrimPrefix(env.Cluster.Config.Host, "https://"), ":")
	script := fmt.Sprintf("mount -t tmpfs tmpfs /run && mkdir -p %[1]s && mount --bind %[2]s %[1]s && "+
		"KUBERNETES_SERVICE_HOST=%[3]s KUBERNETES_SERVICE_PORT=%[4]s KUBECONFIG= HOME=%[2]s exec %[5]s %[6]s",
		serviceAccountDir, files, host, port, env.ControllerBinary(), strings.Join(args, " "))
	if err := env.Cluster.Launch(ctx, "surveyor-in-cluster", "unshare", "--mount", "--propagation", "private", "sh", "-c", script); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(env.Cluster.LogPath("surveyor-in-cluster")); err == nil {
				t.Logf("the controller's log:\n%s", tail(string(b), 60))
			}
		}
		_ = env.Cluster.Terminate("surveyor-in-cluster")
	})
	for _, p := range []*corev1.HTTPGetAction{container.LivenessProbe.HTTPGet, probe} {
		url := "http://" + ports[":"+p.Port.String()] + p.Path
		eventually(t, time.Minute, func() (bool, string) {
			resp, err := http.Get(url)
			if err != nil {
				return false, err.Error()
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, fmt.Sprintf("GET %s: %s", url, resp.Status)
		})
	}

	if err := cluster.Apply(ctx, env.Cluster.Config, "../../samples"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	eventually(t, 3*time.Minute, func() (bool, string) {
		var notReady []string
		owners := 0
		for _, kind := range v1alpha1.OwnerKinds {
			list := &unstructured.UnstructuredList{}
			list.SetAPIVersion(v1alpha1.GroupVersion.String())
			list.SetKind(kind.Kind + "List")
			if err := k8s.List(ctx, list); err != nil {
				return false, err.Error()
			}
			for _, o := range list.Items {
				owners++
				ok, why := ready(o)
				if o.GetName() == "hello-web-prebuilt" { // by design (samples/README.md)
					ok = strings.HasPrefix(why, "False SupplyChainNotFound:")
				}
				if !ok {
					notReady = append(notReady, kind.Kind+" "+o.GetNamespace()+"/"+o.GetName()+" ("+why+")")
				}
			}
		}
		return owners > 0 && len(notReady) == 0, fmt.Sprintf("%d owners, not Ready: %v", owners, notReady)
	})
	t.Logf("samples/ Ready %s after they were applied, under the manifest's RBAC alone", time.Since(start).Round(time.Millisecond))
}

// ready says whether o is Ready, and if not, why.
func ready(o unstructured.Unstructured) (bool, string) {
	conditions, _, _ := unstructured.NestedSlice(o.Object, "status", "conditions")
	for _, c := range conditions {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m["status"] == "True", fmt.Sprintf("%v %v: %v", m["status"], m["reason"], m["message"])
		}
	}
	return false, "no Ready condition"
}

func eventually(t *testing.T, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	env.Eventually(ctx, t, timeout, cond)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
