package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the server-side-apply manager of everything the tooling applies.
const FieldManager = "surveyor-dev"

// ReadObjects decodes every YAML document in the given files and directories
// (recursively, *.yaml and *.yml, skipping kustomization.yaml) in path order.
func ReadObjects(paths ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, root := range paths {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			ext := filepath.Ext(path)
			if (ext != ".yaml" && ext != ".yml") || strings.HasPrefix(d.Name(), "kustomization.") {
				return nil
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			decoded, err := decode(b)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			objs = append(objs, decoded...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return objs, nil
}

func decode(b []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
}

// Apply server-side applies every object in the given files and directories:
// Namespaces and CRDs first (waiting for CRDs to be Established), then the rest.
// Objects whose kind is not served yet are retried briefly, so one call can install
// CRDs and their instances.
func Apply(ctx context.Context, cfg *rest.Config, paths ...string) error {
	objs, err := ReadObjects(paths...)
	if err != nil {
		return err
	}
	first := func(o *unstructured.Unstructured) bool {
		return o.GetKind() == "Namespace" || o.GetKind() == "CustomResourceDefinition"
	}
	var early, late []*unstructured.Unstructured
	for _, o := range objs {
		if first(o) {
			early = append(early, o)
		} else {
			late = append(late, o)
		}
	}
	for _, batch := range [][]*unstructured.Unstructured{early, late} {
		if err := applyBatch(ctx, cfg, batch); err != nil {
			return err
		}
	}
	return nil
}

func applyBatch(ctx context.Context, cfg *rest.Config, objs []*unstructured.Unstructured) error {
	pending := objs
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		// A new client each round rediscovers the API, picking up freshly
		// established CRDs.
		c, err := client.New(cfg, client.Options{})
		if err != nil {
			lastErr = err
			return false, nil
		}
		var retry []*unstructured.Unstructured
		for _, o := range pending {
			obj := o.DeepCopy()
			if err := c.Patch(ctx, obj, client.Apply, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
				if meta.IsNoMatchError(err) {
					retry, lastErr = append(retry, o), err
					continue
				}
				return false, fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
			}
			if o.GetKind() == "CustomResourceDefinition" {
				if err := waitEstablished(ctx, c, o.GetName()); err != nil {
					return false, err
				}
			}
		}
		pending = retry
		return len(pending) == 0, nil
	})
	if err != nil && lastErr != nil {
		return fmt.Errorf("%w (last error: %v)", err, lastErr)
	}
	return err
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		if err := c.Get(ctx, client.ObjectKey{Name: name}, u); err != nil {
			return false, nil
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &crd); err != nil {
			return false, err
		}
		for _, cond := range crd.Status.Conditions {
			if cond.Type == apiextensionsv1.Established {
				return cond.Status == apiextensionsv1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}
