package stamp

// Project returns the values answer holds at the paths stamped sets: for each key of a stamped
// map the projection of answer's value under that key (a key answer lacks is left out), for a
// stamped list of the length answer's list has the projection element by element, and
// otherwise answer's value itself. answer is what the API server made of stamped (the object
// an apply returned), so Contains(live, Project(answer, stamped)) tells whether live still says
// at every stamped path what the server said there after Surveyor's apply, whatever the server
// did to what was sent: dropped a field a newer CRD version no longer has (left out), converted
// or defaulted it, normalised a quantity. The reconciler compares a live object so when
// Contains(live, stamped) fails (DESIGN §3.5), so that such a field costs one write, not one
// per reconcile, while an edit by someone else at a stamped path still shows.
//
// The result shares no map or list with answer.
func Project(answer, stamped map[string]any) map[string]any {
	p, _ := project(answer, stamped).(map[string]any)
	return p
}

func project(answer, stamped any) any {
	switch s := stamped.(type) {
	case map[string]any:
		a, ok := answer.(map[string]any)
		if !ok {
			break
		}
		p := make(map[string]any, len(s))
		for k, sv := range s {
			if av, ok := a[k]; ok {
				p[k] = project(av, sv)
			}
		}
		return p
	case []any:
		a, ok := answer.([]any)
		if !ok || len(a) != len(s) {
			break
		}
		p := make([]any, len(s))
		for i := range s {
			p[i] = project(a[i], s[i])
		}
		return p
	}
	return deepCopy(answer)
}

// deepCopy copies a JSON value, so that a projection outlives changes to the object it was
// read from. Unlike runtime.DeepCopyJSONValue it never panics: a value of a type JSON does not
// have (an int a conversion left) is kept as it is, being immutable.
func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(v))
		for k, e := range v {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(v))
		for i, e := range v {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}
