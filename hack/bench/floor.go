package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/surveyor-dev/surveyor/internal/harness"
	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
)

// floorResult is how long a plain client takes to make the writes the controller must
// make for N Workloads.
type floorResult struct {
	Seconds float64 `json:"seconds"`
	// CreateSeconds is when the last Workload create returned.
	CreateSeconds float64 `json:"createSeconds"`
	Writes        int     `json:"writes"`
	// CPUSeconds is the CPU this process (the plain client) spent on the floor's
	// writes, Workload creates included: what the requests alone cost a client, with
	// no watch and no reconcile.
	CPUSeconds float64 `json:"cpuSeconds"`
	// ControlPlaneCPUSeconds is what the API server, etcd and kube-controller-manager
	// spent meanwhile, by process.
	ControlPlaneCPUSeconds map[string]float64 `json:"controlPlaneCPUSeconds"`
}

// runFloor measures the physical limit of the controller's job with no controller
// involved, on a fresh cluster like the one the controller's run gets. It runs the same
// pipeline as the real run:
//
//   - the same creators (goroutines, client settings) create N Workloads;
//   - as each is created, one of max-concurrent-reconciles workers creates its three
//     objects and writes its status once, exactly the writes a perfect controller makes.
//
// The workers' clients have no client-side rate limit, so the floor is the API server's
// capacity (with priority and fairness on), not a client's token bucket. They are
// authenticated as the controller's ServiceAccount, writing objects by impersonating the
// stamping ServiceAccount. The objects carry the same labels, owner reference and
// annotation the controller stamps, and the status the same conditions and resources,
// so request sizes match too.
func (e *env) runFloor(ctx context.Context, n int) (*floorResult, error) {
	controllerConfig, err := e.ControllerConfig(ctx)
	if err != nil {
		return nil, err
	}
	objCfg := rest.CopyConfig(controllerConfig)
	objCfg.QPS = -1
	objCfg.Impersonate = rest.ImpersonationConfig{UserName: serviceAccountUser(benchNamespace, stamperAccount)}
	objects, err := client.New(objCfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		return nil, err
	}
	statusCfg := rest.CopyConfig(controllerConfig)
	statusCfg.QPS = -1
	status, err := client.New(statusCfg, client.Options{Scheme: e.Scheme})
	if err != nil {
		return nil, err
	}

	// A first small batch, untimed, warms the API server (which has just started and
	// builds its handlers for a CRD on first use) and the clients' discovery.
	if _, err := e.floorPipeline(ctx, objects, status, "warm", min(n, 20)); err != nil {
		return nil, err
	}
	return e.floorPipeline(ctx, objects, status, "w", n)
}

// floorPipeline creates n Workloads named <prefix>-NNNNN and, behind them, their
// objects and status, timing the whole.
func (e *env) floorPipeline(ctx context.Context, objects, status client.Client, prefix string, n int) (*floorResult, error) {
	created := make(chan *v1alpha1.Workload, n)
	errs := make(chan error, e.opts.concurrency)
	var workers sync.WaitGroup
	var mu sync.Mutex
	var last time.Time
	for range e.opts.concurrency {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for wl := range created {
				if err := floorWrites(ctx, objects, status, wl); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				last = time.Now()
				mu.Unlock()
			}
		}()
	}
	cpuBefore, err := harness.ReadProc(os.Getpid())
	if err != nil {
		return nil, err
	}
	planeBefore, err := e.controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = createParallel(ctx, n, e.opts.creators, func(ctx context.Context, i int) error {
		wl := newWorkload(benchNamespace, fmt.Sprintf("%s-%05d", prefix, i), "floor", groupOf(i, e.opts.rolloutGroups))
		err := e.admin.Create(ctx, wl)
		if apierrors.IsAlreadyExists(err) { // a retried create that had succeeded
			err = e.admin.Get(ctx, client.ObjectKeyFromObject(wl), wl)
		}
		if err == nil {
			created <- wl
		}
		return err
	})
	createDone := time.Since(start)
	close(created)
	workers.Wait()
	if err != nil {
		return nil, fmt.Errorf("creating floor Workloads: %w", err)
	}
	select {
	case err := <-errs:
		return nil, fmt.Errorf("floor writes: %w", err)
	default:
	}
	cpuAfter, err := harness.ReadProc(os.Getpid())
	if err != nil {
		return nil, err
	}
	planeAfter, err := e.controlPlaneCPU()
	if err != nil {
		return nil, err
	}
	return &floorResult{
		Seconds: last.Sub(start).Seconds(), CreateSeconds: createDone.Seconds(), Writes: 5 * n,
		CPUSeconds:             (cpuAfter.CPU - cpuBefore.CPU).Seconds(),
		ControlPlaneCPUSeconds: cpuDelta(planeBefore, planeAfter),
	}, nil
}

// floorWrites creates the Workload's three objects and writes its status once.
func floorWrites(ctx context.Context, objects, status client.Client, wl *v1alpha1.Workload) error {
	for _, obj := range stampedObjects(wl) {
		if err := objects.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating %s: %w", obj.GetName(), err)
		}
	}
	orig := wl.DeepCopy()
	wl.Status = readyStatus(wl, metav1.Now())
	return status.Status().Patch(ctx, wl, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{}))
}

// stampedObjects are the objects the bench supply chain stamps for wl, as the
// controller stamps them.
func stampedObjects(wl *v1alpha1.Workload) []client.Object {
	meta := func(name, resource, kind, template string) metav1.ObjectMeta {
		return metav1.ObjectMeta{
			Name: name, Namespace: wl.Namespace,
			Labels: map[string]string{
				v1alpha1.LabelWorkloadName: wl.Name, v1alpha1.LabelWorkloadNamespace: wl.Namespace,
				v1alpha1.LabelSupplyChainName: "bench", v1alpha1.LabelResourceName: resource,
				v1alpha1.LabelTemplateKind: kind, v1alpha1.LabelClusterTemplateName: template,
			},
			Annotations: map[string]string{"carto.run/stamp-digest": digest(name)},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.KindWorkload, Name: wl.Name, UID: wl.UID,
				Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
			}},
		}
	}
	url := wl.Spec.Source.Git.URL
	svc := &corev1.Service{
		ObjectMeta: meta(wl.Name, "service", "ClusterTemplate", "bench-service"),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Ports:     []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	svc.Annotations["bench.surveyor.dev/source-revision"] = "main"
	return []client.Object{
		&corev1.ConfigMap{
			ObjectMeta: meta(wl.Name+"-source", "source", "ClusterSourceTemplate", "bench-source"),
			Data:       map[string]string{"url": url, "revision": "main"},
		},
		&corev1.ConfigMap{
			ObjectMeta: meta(wl.Name+"-config", "config", "ClusterConfigTemplate", "bench-config"),
			Data: map[string]string{
				"APP_NAME": wl.Name, "APP_SOURCE_URL": url, "APP_SOURCE_REVISION": "main", "APP_LISTEN_ADDRESS": "0.0.0.0:8080",
			},
		},
		svc,
	}
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// readyStatus is the status of a realized, healthy bench Workload: the one write the
// controller cannot avoid.
func readyStatus(wl *v1alpha1.Workload, now metav1.Time) v1alpha1.WorkloadStatus {
	gen := wl.Generation
	cond := func(typ, reason, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg, ObservedGeneration: gen, LastTransitionTime: now}
	}
	resource := func(name, kind, template, objKind, objName, plural string, inputs []string, outputs []v1alpha1.Output, extra ...metav1.Condition) v1alpha1.ResourceStatus {
		rs := v1alpha1.ResourceStatus{
			Name:               name,
			StampedRef:         &v1alpha1.StampedRef{APIVersion: "v1", Kind: objKind, Namespace: wl.Namespace, Name: objName, Resource: plural},
			TemplateRef:        &v1alpha1.TemplateReference{APIVersion: v1alpha1.GroupVersion.String(), Kind: kind, Name: template},
			Outputs:            outputs,
			ObservedGeneration: gen,
			Conditions: append([]metav1.Condition{
				cond(v1alpha1.ConditionResourceSubmitted, v1alpha1.ReasonResourceSubmissionComplete, ""),
				cond(v1alpha1.ConditionHealthy, v1alpha1.ReasonMatchedField, "field value: "+wl.Spec.Source.Git.URL),
				cond(v1alpha1.ConditionReady, v1alpha1.ReasonReady, ""),
			}, extra...),
		}
		for _, in := range inputs {
			rs.Inputs = append(rs.Inputs, v1alpha1.Input{Name: in})
		}
		return rs
	}
	output := func(name, preview string) v1alpha1.Output {
		return v1alpha1.Output{Name: name, Preview: preview, Digest: "sha256:" + digest(preview), LastTransitionTime: now}
	}
	url := wl.Spec.Source.Git.URL
	st := v1alpha1.WorkloadStatus{SupplyChainRef: &v1alpha1.BlueprintReference{Kind: v1alpha1.KindClusterSupplyChain, Name: "bench"}}
	st.ObservedGeneration = gen
	st.Conditions = []metav1.Condition{
		cond(v1alpha1.ConditionSupplyChainReady, v1alpha1.ReasonReady, ""),
		cond(v1alpha1.ConditionResourcesSubmitted, v1alpha1.ReasonResourceSubmissionComplete, ""),
		cond(v1alpha1.ConditionResourcesHealthy, v1alpha1.ReasonHealthyConditionRule, ""),
		cond(v1alpha1.ConditionReady, v1alpha1.ReasonReady, ""),
		cond(v1alpha1.ConditionAvailable, v1alpha1.ReasonHealthyAtGeneration, fmt.Sprintf("all resources were healthy at generation %d", gen)),
		cond("Labelled", "ConditionRulesPassed", "Resource is Labelled"),
	}
	st.Resources = []v1alpha1.ResourceStatus{
		resource("source", "ClusterSourceTemplate", "bench-source", "ConfigMap", wl.Name+"-source", "configmaps", nil,
			[]v1alpha1.Output{output("url", url+"\n"), output("revision", "main\n")}),
		resource("config", "ClusterConfigTemplate", "bench-config", "ConfigMap", wl.Name+"-config", "configmaps", []string{"source"},
			[]v1alpha1.Output{output("config", "APP_LISTEN_ADDRESS: 0.0.0.0:8080\nAPP_NAME: "+wl.Name+"\nAPP_SOURCE_REVISION: main\nAPP_SOURCE_URL: "+url+"\n")}),
		resource("service", "ClusterTemplate", "bench-service", "Service", wl.Name, "services", []string{"config"}, nil,
			cond("Labelled", "ConditionRulesPassed", "Resource is Labelled")),
	}
	return st
}
