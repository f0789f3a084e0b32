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

// NewContext returns what a template reads, as Cartographer builds it (its reference, A4): the
// owner under each of ownerKeys (a Workload and a Deliverable go by both workload and
// deliverable), params ({} when none), sources.<name>.{url,revision,name},
// images.<name>.{image,name} and configs.<name>.{config,name} (each {} when none), deployment
// ({url, revision, name: ""} when given, else null) and labels, the labels Surveyor sets on the
// stamped object. When exactly one input of a kind is present it is also there in the
// singular: source ({url, revision, name}), image and config (the value itself).
//
// The same context is read by $(...)$ tags and, one data value per top-level key, by a ytt
// template (DESIGN §11): the two kinds of template cannot see different things.
//
// The context shares the maps it is given; Stamp copies what it inserts, so the stamped object
// never aliases the owner or the inputs.
func NewContext(ownerKeys []string, owner, params map[string]any, labels map[string]string, inputs Inputs) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	sources := make(map[string]any, len(inputs.Sources))
	for name, s := range inputs.Sources {
		sources[name] = map[string]any{"url": s.URL, "revision": s.Revision, "name": name}
	}
	images := make(map[string]any, len(inputs.Images))
	for name, v := range inputs.Images {
		images[name] = map[string]any{"image": v, "name": name}
	}
	configs := make(map[string]any, len(inputs.Configs))
	for name, v := range inputs.Configs {
		configs[name] = map[string]any{"config": v, "name": name}
	}
	labelValues := make(map[string]any, len(labels))
	for k, v := range labels {
		labelValues[k] = v
	}
	ctx := map[string]any{
		"params":     params,
		"sources":    sources,
		"images":     images,
		"configs":    configs,
		"deployment": nil,
		"labels":     labelValues,
	}
	if d := inputs.Deployment; d != nil {
		ctx["deployment"] = map[string]any{"url": d.URL, "revision": d.Revision, "name": ""}
	}
	for _, key := range ownerKeys {
		ctx[key] = owner
	}
	if len(inputs.Sources) == 1 {
		for _, s := range sources {
			ctx["source"] = s
		}
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
