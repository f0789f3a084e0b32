package stamp_test

import (
	"fmt"

	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// A whole-string tag keeps the value's type; a tag inside a longer string becomes text.
func ExampleStamp() {
	workload := map[string]any{"metadata": map[string]any{"name": "petclinic"}}
	ctx := stamp.NewContext([]string{stamp.OwnerWorkload}, workload, map[string]any{"replicas": int64(2)}, nil, stamp.Inputs{
		Images: map[string]any{"built": "registry.example.com/petclinic@sha256:1234"},
	})
	obj, err := stamp.Stamp([]byte(`{
		"kind": "Deployment",
		"metadata": {"name": "$(workload.metadata.name)$-web"},
		"spec": {"replicas": "$(params.replicas)$", "image": "$(image)$"}
	}`), ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s %T %v %v\n", obj.GetName(), obj.Object["spec"].(map[string]any)["replicas"],
		obj.Object["spec"].(map[string]any)["replicas"], obj.Object["spec"].(map[string]any)["image"])

	_, err = stamp.Stamp([]byte(`{"spec": {"image": "$(workload.spec.image)$"}}`), ctx)
	fmt.Println(err)
	// Output:
	// petclinic-web int64 2 registry.example.com/petclinic@sha256:1234
	// jsonpath [workload.spec.image] at .spec.image: spec is not found
}

// An output's preview is its YAML, cut at 1024 bytes; its digest covers the whole YAML.
func ExamplePreview() {
	preview, digest, _ := stamp.Preview(map[string]any{"containers": []any{map[string]any{"name": "workload"}}})
	fmt.Print(preview)
	fmt.Println(digest[:7])
	// Output:
	// containers:
	//     - name: workload
	// sha256:
}
