package integration

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The local cluster is real: the Deployment and ReplicaSet controllers, the scheduler
// and kwok's simulated kubelet make a Deployment Available.
func TestClusterDeploymentBecomesAvailable(t *testing.T) {
	ns := newNamespace(t)
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "registry.example/web:1"}}},
			},
		},
	}
	if err := k8sClient.Create(ctx, deploy); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() (bool, string) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(deploy), deploy); err != nil {
			return false, err.Error()
		}
		for _, c := range deploy.Status.Conditions {
			if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue && deploy.Status.AvailableReplicas == 2 {
				return true, ""
			}
		}
		return false, fmt.Sprintf("availableReplicas=%d conditions=%+v", deploy.Status.AvailableReplicas, deploy.Status.Conditions)
	})
}

// The real Job controller judges a Job whose pod kwok completes: on 1.33 it sets
// SuccessCriteriaMet (CompletionsReached) and then Complete.
func TestClusterJobCompletes(t *testing.T) {
	ns := newNamespace(t)
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers:    []corev1.Container{{Name: "once", Image: "registry.example/once:1"}},
			}},
		},
	}
	if err := k8sClient.Create(ctx, job); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, func() (bool, string) {
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(job), job); err != nil {
			return false, err.Error()
		}
		return jobCondition(job, batchv1.JobComplete) != nil, fmt.Sprintf("%+v", job.Status)
	})
	for _, want := range []struct {
		typ    batchv1.JobConditionType
		reason string
	}{
		{batchv1.JobSuccessCriteriaMet, "CompletionsReached"},
		{batchv1.JobComplete, "CompletionsReached"},
	} {
		c := jobCondition(job, want.typ)
		if c == nil || c.Status != corev1.ConditionTrue || c.Reason != want.reason {
			t.Errorf("condition %s = %+v, want status True reason %s", want.typ, c, want.reason)
		}
	}
	if job.Status.Succeeded != 1 {
		t.Errorf("succeeded = %d, want 1", job.Status.Succeeded)
	}
}

// kube-controller-manager's garbage collector removes dependents of a deleted owner,
// which Surveyor relies on for stamped objects.
func TestClusterGarbageCollectsDependents(t *testing.T) {
	ns := newNamespace(t)
	owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner", Namespace: ns}}
	if err := k8sClient.Create(ctx, owner); err != nil {
		t.Fatal(err)
	}
	dependent := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "dependent", Namespace: ns,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if err := k8sClient.Create(ctx, dependent); err != nil {
		t.Fatal(err)
	}
	if err := k8sClient.Delete(ctx, owner); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, func() (bool, string) {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(dependent), &corev1.ConfigMap{})
		return apierrors.IsNotFound(err), fmt.Sprintf("get dependent: %v", err)
	})
}

func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) *batchv1.JobCondition {
	for i := range job.Status.Conditions {
		if job.Status.Conditions[i].Type == typ {
			return &job.Status.Conditions[i]
		}
	}
	return nil
}

// newNamespace creates a namespace for one test and deletes it afterwards.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "it-"}}
	if err := k8sClient.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k8sClient.Delete(ctx, ns) })
	return ns.Name
}
