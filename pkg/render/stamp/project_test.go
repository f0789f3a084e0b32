package stamp_test

import (
	"reflect"
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

func TestProject(t *testing.T) {
	stamped := map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1beta1",
		"spec": map[string]any{
			"url":               "https://github.com/a/b",
			"gitImplementation": "libgit2",
			"ref":               map[string]any{"branch": "main"},
			"containers": []any{
				map[string]any{"name": "app", "resources": map[string]any{"limits": map[string]any{"cpu": "1000m"}}},
			},
			"ports": []any{map[string]any{"port": int64(80)}},
			"tags":  "a",
		},
	}
	answerOf := func() map[string]any {
		return map[string]any{
			"apiVersion": "source.toolkit.fluxcd.io/v1beta1",
			"metadata":   map[string]any{"generation": int64(1)},
			"spec": map[string]any{
				"url":      "https://github.com/a/b",
				"interval": "1m0s", // defaulted, not stamped
				"ref":      map[string]any{"branch": "main", "tag": "v1"},
				"containers": []any{
					map[string]any{"name": "app", "imagePullPolicy": "Always", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}},
				},
				"ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81)}},
				"tags":  []any{"a"},
			},
			"status": map[string]any{"ready": true},
		}
	}
	answer := answerOf()
	want := map[string]any{
		"apiVersion": "source.toolkit.fluxcd.io/v1beta1",
		"spec": map[string]any{
			"url": "https://github.com/a/b",
			// gitImplementation: dropped by the server, so left out
			"ref": map[string]any{"branch": "main"},
			"containers": []any{
				map[string]any{"name": "app", "resources": map[string]any{"limits": map[string]any{"cpu": "1"}}},
			},
			// a list of another length, or a value of another type, is the answer's whole
			"ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81)}},
			"tags":  []any{"a"},
		},
	}
	got := stamp.Project(answer, stamped)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Project() =\n%#v\nwant\n%#v", got, want)
	}
	if !stamp.Contains(answer, got) {
		t.Error("the answer does not contain its own projection")
	}
	// The projection shares nothing with the answer.
	answer["spec"].(map[string]any)["ports"].([]any)[1].(map[string]any)["port"] = int64(82)
	if !reflect.DeepEqual(got, want) {
		t.Error("changing the answer changed the projection")
	}
	// An edit at a stamped path shows; one outside the stamped paths does not.
	live := answerOf()
	live["spec"].(map[string]any)["interval"] = "5m"
	if !stamp.Contains(live, got) {
		t.Error("an edit outside the stamped paths shows")
	}
	live["spec"].(map[string]any)["url"] = "https://github.com/evil/b"
	if stamp.Contains(live, got) {
		t.Error("an edited url does not show")
	}
}
