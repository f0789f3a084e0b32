package stamp_test
import ("testing";"fmt";"github.com/surveyor-dev/surveyor/pkg/realizer/stamp")
func TestZZProbe(t *testing.T){
  seen := map[string]int{}
  for i := 0; i < 200; i++ {
    _, err := stamp.Stamp([]byte(`{"a b":{"c d":"$(params.x)$"},"a b']['c d":"$(params.y)$"}`), map[string]any{"params": map[string]any{}})
    seen[err.Error()]++
  }
  for k, v := range seen { fmt.Println(v, k) }
}
