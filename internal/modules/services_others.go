//go:build !windows

package modules

import (
	"context"
	"errors"

	"github.com/kubeedge-windows/edgecore/internal/servicestore"
)

// startProxier: Windows' kernelspace proxier exists on Windows only; the
// DNS responder runs everywhere.
func startProxier(context.Context, servicesPlan, *servicestore.Store) error {
	return errors.New("the kernelspace proxier programs Windows' Host Networking Service: on this OS the node serves the cluster's DNS names only")
}
