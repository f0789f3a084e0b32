package digestkey

import (
	"context"
	"crypto/rand"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The key of the digests of Secret-derived outputs (DESIGN §12) lives in a Secret in the
// controller's namespace, where readers of owners cannot get it. A Secret rather than a flag
// or a file: it survives restarts and is shared by every replica without anyone provisioning
// it, so a restart computes the same digests and writes nothing. Only its own name is granted
// (a Role, not a ClusterRole; creating cannot be limited to a name by RBAC).
// +kubebuilder:rbac:groups="",namespace=surveyor-system,resources=secrets,resourceNames=surveyor-digest-key,verbs=get
// +kubebuilder:rbac:groups="",namespace=surveyor-system,resources=secrets,verbs=create

// Secret is the name of the Secret holding the digest key.
const Secret = "surveyor-digest-key"

// DefaultNamespace is the namespace config/rbac lets the controller keep the digest
// key in.
const DefaultNamespace = "surveyor-system"

// digestKeyField is the key of the Secret's data holding the digest key.
const digestKeyField = "key"

// digestKeyBytes is the length of a new key, and the least an existing one must have: the
// HMAC-SHA256 block is 64 bytes, and 32 random bytes are beyond any guessing.
const digestKeyBytes = 32

// Load reads the digest key from the Secret Secret in namespace, creating
// the Secret with a new random key when there is none. It reads with the uncached reader: it
// runs before the manager's cache starts, and the cache must not hold every Secret. Two
// replicas starting at once both try to create; the one that loses reads the winner's key.
func Load(ctx context.Context, r client.Reader, w client.Writer, namespace string) ([]byte, error) {
	key := client.ObjectKey{Namespace: namespace, Name: Secret}
	secret := &corev1.Secret{}
	err := r.Get(ctx, key, secret)
	if apierrors.IsNotFound(err) {
		fresh := make([]byte, digestKeyBytes)
		if _, err := rand.Read(fresh); err != nil {
			return nil, fmt.Errorf("making a digest key: %w", err)
		}
		secret = &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: Secret},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{digestKeyField: fresh},
			// A changed key would change the digest of every Secret-derived output at once,
			// and with it every owner's status: the key is replaced only on purpose, by
			// deleting the Secret.
			Immutable: ptr.To(true),
		}
		err = w.Create(ctx, secret)
		if apierrors.IsAlreadyExists(err) {
			err = r.Get(ctx, key, secret)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the digest key from secret %s: %w", key, err)
	}
	k := secret.Data[digestKeyField]
	if len(k) < digestKeyBytes {
		return nil, fmt.Errorf("secret %s holds a digest key of %d bytes under %q, want at least %d", key, len(k), digestKeyField, digestKeyBytes)
	}
	return k, nil
}
