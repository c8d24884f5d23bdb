// Package prepull carries out an ImagePrePullJob on the node: each image
// is pulled through the node's container runtime (CRI) with the
// credentials of the job's pull secret for that image's registry, tried
// again up to the job's retry count, and given a status of its own.
// Upstream's runner decodes the secret's .dockerconfigjson straight into
// one CRI AuthConfig, which leaves every credential empty, and retries the
// whole list when one image fails.
package prepull

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/kubernetes/pkg/credentialprovider"

	operationsv1alpha2 "github.com/kubeedge/api/apis/operations/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config/redact"
)

// Puller pulls one image through the node's runtime; an image the runtime
// has already counts as pulled.
type Puller interface {
	PullImage(ctx context.Context, image string, auth *runtimeapi.AuthConfig, sandbox *runtimeapi.PodSandboxConfig) error
}

// Keyring finds the credentials for an image in a pull secret.
type Keyring struct {
	ring *credentialprovider.BasicDockerKeyring
}

// NewKeyring reads a secret's .dockerconfigjson (kubernetes.io/dockerconfigjson).
func NewKeyring(dockerConfigJSON []byte) (*Keyring, error) {
	var cfg credentialprovider.DockerConfigJSON
	if err := json.Unmarshal(dockerConfigJSON, &cfg); err != nil {
		return nil, fmt.Errorf("the pull secret's .dockerconfigjson is not valid (%v): create it with `kubectl create secret docker-registry`", err)
	}
	ring := &credentialprovider.BasicDockerKeyring{}
	ring.Add(cfg.Auths)
	return &Keyring{ring: ring}, nil
}

// For is the credential for image, nil when the secret has none for its
// registry (the image is pulled anonymously).
func (k *Keyring) For(image string) *runtimeapi.AuthConfig {
	if k == nil {
		return nil
	}
	found, ok := k.ring.Lookup(image)
	if !ok || len(found) == 0 {
		return nil
	}
	a := found[0]
	return &runtimeapi.AuthConfig{Username: a.Username, Password: a.Password, Auth: a.Auth,
		ServerAddress: a.ServerAddress, IdentityToken: a.IdentityToken, RegistryToken: a.RegistryToken}
}

// Job is one node's part of an ImagePrePullJob.
type Job struct {
	Images []string
	// Retries is spec.imagePrePullTemplate.retryTimes: how many more
	// times a failed pull is tried.
	Retries int
	Keyring *Keyring
	// Delay is the pause between tries of an image.
	Delay time.Duration
}

// Pull pulls every image of j and returns a status per image, in the
// job's order, and whether all were pulled. The reasons are the runtime's,
// with the number of tries.
func Pull(ctx context.Context, p Puller, j Job) ([]operationsv1alpha2.ImageStatus, bool) {
	out := make([]operationsv1alpha2.ImageStatus, 0, len(j.Images))
	all := true
	for _, image := range j.Images {
		st := operationsv1alpha2.ImageStatus{Image: image, Status: metav1.ConditionTrue}
		var err error
		tries := 0
		auth := j.Keyring.For(image)
		for tries <= j.Retries {
			tries++
			if err = p.PullImage(ctx, image, auth, nil); err == nil || ctx.Err() != nil {
				break
			}
			if tries <= j.Retries {
				select {
				case <-ctx.Done():
				case <-time.After(j.Delay):
				}
			}
		}
		if err != nil {
			all = false
			st.Status = metav1.ConditionFalse
			// A registry's or runtime's message may repeat what it was
			// given; the reason goes to the job's status.
			st.Reason = redact.String(fmt.Sprintf("pull failed after %d tries: %v", tries, err), secretsOf(auth)...)
		}
		out = append(out, st)
	}
	return out, all
}

// secretsOf are the values of a credential that no message may repeat.
func secretsOf(a *runtimeapi.AuthConfig) []string {
	if a == nil {
		return nil
	}
	return []string{a.Password, a.Auth, a.IdentityToken, a.RegistryToken}
}
