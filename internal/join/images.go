package join

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kubeedge-windows/edgecore/internal/images"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

// stepImages imports the air-gapped images before the service starts:
// the node would import them at its start too, but before its hub
// connects, which join waits for within --timeout; a large archive would
// use that up without a line of progress.
const stepImages = "import image archives"

// imagesStep is the join step that imports the image archives of the
// release's images folder and of the kubeedge directory's into
// containerd's k8s.io namespace.
func (j *Join) imagesStep() steps.Step {
	return steps.Step{
		Name: stepImages,
		Description: fmt.Sprintf("import the image archives (*%s) of %s not imported yet into containerd's %s namespace at %s, at most %d GiB and %v each; nothing when there are none",
			images.Extension, strings.Join(j.imageDirs(), " and "), images.Namespace, j.endpoint(), images.MaxArchiveBytes>>30, images.DefaultTimeout),
		Do: j.importImages,
		// No undo: an imported image is harmless, and the record of it
		// goes with the kubeedge directory that "create directories"
		// removes.
	}
}

func (j *Join) imageDirs() []string {
	return images.Dirs(j.o.Layout, j.o.Executable)
}

func (j *Join) endpoint() string { return images.Endpoint(j.cfg) }

func (j *Join) importImages(ctx context.Context, out io.Writer) error {
	return j.sys.ImportImages(ctx, out, j.endpoint(), j.imageDirs())
}
