package node

import (
	"context"
	"strings"
	"time"

	"k8s.io/klog/v2"

	"github.com/kubeedge-windows/edgecore/internal/images"
)

// importImages imports the image archives of dirs that were not imported
// yet into containerd's k8s.io namespace, before edged starts, so that an
// offline node has its sandbox and pod images when the first pod comes.
// With no archive it returns at once, without dialling containerd; with
// archives already imported it asks containerd only whether their images
// are still there. A failed archive is logged and skipped: the node
// starts all the same, and `edgecore.exe images import` names the fix.
func importImages(ctx context.Context, im *images.Importer, dirs []string) {
	archives, err := images.Find(dirs)
	if err != nil {
		klog.ErrorS(err, "Image archives not imported")
		return
	}
	if len(archives) == 0 {
		return
	}
	start := time.Now()
	outcomes, err := im.ImportNew(ctx, klogLines{}, archives)
	if err != nil {
		klog.ErrorS(err, "Some image archives were not imported; fix them and restart the service, or import them with `edgecore.exe images import`")
	}
	imported := 0
	for _, o := range outcomes {
		if o.Err == nil && !o.Skipped {
			imported++
		}
	}
	klog.InfoS("Image archives checked", "folders", dirs, "archives", len(archives), "imported", imported, "took", time.Since(start).Round(time.Millisecond))
}

// klogLines logs each line the importer prints.
type klogLines struct{}

func (klogLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		klog.InfoS("Image import", "step", line)
	}
	return len(p), nil
}
