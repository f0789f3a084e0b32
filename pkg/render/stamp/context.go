package stamp

// The key the owner goes by in the context, as templates spell it: $(workload.spec.image)$.
const (
	// OwnerWorkload is the context key of a Workload.
	OwnerWorkload = "workload"
	// OwnerDeliverable is the context key of a Deliverable.
	OwnerDeliverable = "deliverable"
)

// Source is a source output: the url and revision read from a ClusterSourceTemplate's object.
type Source struct {
	// URL is the value read with urlPath.
	URL any
	// Revision is the value read with revisionPath.
	Revision any
}

// Inputs are the outputs of earlier resources that a resource consumes, keyed by the names the
// resource gives them in its sources, images and configs.
type Inputs struct {
	// Sources are read as $(sources.<name>.url)$ and $(sources.<name>.revision)$.
	Sources map[string]Source
	// Images are read as $(images.<name>.image)$.
	Images map[string]any
	// Configs are read as $(configs.<name>.config)$.
	Configs map[string]any
	// Deployment is read as $(deployment.url)$ and $(deployment.revision)$ (deliveries only).
	Deployment *Source
}

// NewContext returns what a template's tags read: the owner under each of ownerKeys (OwnerWorkload,
// or OwnerDeliverable and OwnerWorkload), params, sources.<name>.{url,revision}, images.<name>.image and
// configs.<name>.config, and deployment.{url,revision} when given. When exactly one input of a kind is present it is also available in the
// singular, as Cartographer offers it: $(source.url)$, $(source.revision)$, $(image)$ and
// $(config)$.
//
// The context shares the maps it is given; Stamp copies what it inserts, so the stamped object
// never aliases the owner or the inputs.
func NewContext(ownerKeys []string, owner, params map[string]any, inputs Inputs) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	sources := make(map[string]any, len(inputs.Sources))
	for name, s := range inputs.Sources {
		sources[name] = map[string]any{"url": s.URL, "revision": s.Revision}
	}
	images := make(map[string]any, len(inputs.Images))
	for name, v := range inputs.Images {
		images[name] = map[string]any{"image": v}
	}
	configs := make(map[string]any, len(inputs.Configs))
	for name, v := range inputs.Configs {
		configs[name] = map[string]any{"config": v}
	}
	ctx := map[string]any{
		"params":  params,
		"sources": sources,
		"images":  images,
		"configs": configs,
	}
	if d := inputs.Deployment; d != nil {
		ctx["deployment"] = map[string]any{"url": d.URL, "revision": d.Revision}
	}
	for _, key := range ownerKeys {
		ctx[key] = owner
	}
	if s, ok := only(inputs.Sources); ok {
		ctx["source"] = map[string]any{"url": s.URL, "revision": s.Revision}
	}
	if v, ok := only(inputs.Images); ok {
		ctx["image"] = v
	}
	if v, ok := only(inputs.Configs); ok {
		ctx["config"] = v
	}
	return ctx
}

// only returns the single value of m, if m has exactly one.
func only[V any](m map[string]V) (V, bool) {
	var zero V
	if len(m) != 1 {
		return zero, false
	}
	for _, v := range m {
		return v, true
	}
	return zero, false
}
