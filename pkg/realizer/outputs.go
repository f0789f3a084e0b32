package realizer

import (
	"slices"

	"github.com/surveyor-dev/surveyor/pkg/apis/carto/v1alpha1"
	"github.com/surveyor-dev/surveyor/pkg/render"
	"github.com/surveyor-dev/surveyor/pkg/render/stamp"
)

// outputs turns read values into status outputs, keeping each one's transition time
// while its digest is unchanged, and records ResourceOutputChanged when it moved.
// Outputs read from a Secret are digested with the controller's key and their preview is
// redactedPreview, so status and events never carry secret data, nor a digest that could be
// brute-forced.
func (rz *realization) outputs(name string, values map[string]any, secret bool) []v1alpha1.Output {
	var previous []v1alpha1.Output
	if prev := rz.previous(name); prev != nil {
		previous = prev.Outputs
	}
	digest := stamp.PlainDigest
	if secret {
		digest = rz.r.secretDigest
	}
	outs, err := stamp.StatusOutputs(values, previous, rz.r.now(), digest)
	if err != nil {
		return previous
	}
	if secret {
		for i := range outs {
			outs[i].Preview = render.RedactedValue
		}
	}
	// Only a change is an event: the first read of an output is in the status already.
	for _, o := range outs {
		i := slices.IndexFunc(previous, func(p v1alpha1.Output) bool { return p.Name == o.Name })
		if i >= 0 && previous[i].Digest != o.Digest {
			rz.events.Add(v1alpha1.EventResourceOutputChanged, "Output [%s] of resource [%s] changed to %s", o.Name, name, o.Digest)
		}
	}
	return outs
}
