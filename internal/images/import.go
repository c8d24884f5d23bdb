package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Runtime is containerd as the import uses it, in the k8s.io namespace.
type Runtime interface {
	// Import reads an archive into the content and image stores and
	// returns the names of the images it created.
	Import(ctx context.Context, r io.Reader) ([]string, error)
	// Unpack unpacks the image name into the snapshotter the kubelet's
	// containers use.
	Unpack(ctx context.Context, name string) error
	// Missing lists those of names that the namespace does not hold.
	Missing(ctx context.Context, names []string) ([]string, error)
	// Tag gives the image name the name alias too (the same content),
	// replacing an image of that name.
	Tag(ctx context.Context, name, alias string) error
	Close() error
}

// Importer imports archives into a runtime and keeps the record.
type Importer struct {
	// Connect opens the runtime; it is called once, and only when an
	// archive is there: a host without archives never dials containerd.
	Connect func(ctx context.Context) (Runtime, error)
	// Trusted refuses an archive, or a folder above it, that an account
	// other than SYSTEM and Administrators owns or may change (Access).
	Trusted func(archive string) error
	// RecordPath is the record of imported archives (Layout.ImagesRecord);
	// WriteFile replaces it durably.
	RecordPath string
	WriteFile  func(path string, data []byte) error
	// NoUnpack leaves the layers packed: the kubelet unpacks them when a
	// container first uses the image.
	NoUnpack bool
	// Timeout bounds each archive, unpacking included; zero is
	// DefaultTimeout.
	Timeout time.Duration
	// ProgressStep is how many bytes pass between progress lines; an
	// archive smaller than it shows none. Zero is DefaultProgressStep.
	ProgressStep int64
	Now          func() time.Time
	// Aliases are the other names an imported image has for the node's
	// pulls: the registry a mirror of the node's registry configuration
	// serves it for (registries.Aliases); nil gives none.
	Aliases func(name string) []string

	rt Runtime
}

// DefaultProgressStep prints a progress line every 256 MiB read.
const DefaultProgressStep = 256 << 20

// Outcome is what became of one archive.
type Outcome struct {
	Archive string
	Images  []string
	// Skipped is set for an archive imported before whose images are
	// all still there.
	Skipped bool
	Err     error
}

// ImportNew imports those of archives that were not imported yet, or
// whose images are no longer all in containerd, printing a line for each
// to out. An archive that fails does not stop the others; the errors are
// returned joined, each naming its archive and the fix.
func (im *Importer) ImportNew(ctx context.Context, out io.Writer, archives []Archive) ([]Outcome, error) {
	return im.run(ctx, out, archives, false)
}

// ImportAll imports every one of archives, whatever the record says, as
// `edgecore.exe images import` does.
func (im *Importer) ImportAll(ctx context.Context, out io.Writer, archives []Archive) ([]Outcome, error) {
	return im.run(ctx, out, archives, true)
}

func (im *Importer) run(ctx context.Context, out io.Writer, archives []Archive, force bool) ([]Outcome, error) {
	if len(archives) == 0 {
		return nil, nil
	}
	defer im.close()
	rec, err := ReadRecord(im.RecordPath)
	if err != nil {
		return nil, err
	}
	var outcomes []Outcome
	var errs []error
	for _, a := range archives {
		o := im.one(ctx, out, &rec, a, force)
		outcomes = append(outcomes, o)
		if o.Err != nil {
			fmt.Fprintf(out, "%s: failed: %v\n", a.Path, o.Err)
			errs = append(errs, o.Err)
		}
	}
	return outcomes, errors.Join(errs...)
}

func (im *Importer) one(ctx context.Context, out io.Writer, rec *Record, a Archive, force bool) Outcome {
	o := Outcome{Archive: a.Path}
	if err := im.Trusted(a.Path); err != nil {
		o.Err = err
		return o
	}
	if e, ok := rec.bySameFile(a); ok && !force {
		present, err := im.present(ctx, e.Images)
		if err != nil {
			o.Err = err
			return o
		}
		if present {
			o.Images, o.Skipped = e.Images, true
			fmt.Fprintf(out, "%s: imported before (%s)\n", a.Path, strings.Join(e.Images, ", "))
			return o
		}
	}
	f, err := os.Open(a.Path)
	if err != nil {
		o.Err = fmt.Errorf("image archive %s: %w", a.Path, err)
		return o
	}
	defer f.Close()
	// One handle throughout: the file that is scanned is the file that is
	// imported, and its size read from the handle bounds both.
	info, err := f.Stat()
	if err != nil {
		o.Err = fmt.Errorf("image archive %s: %w", a.Path, err)
		return o
	}
	a.Size, a.ModTime = info.Size(), info.ModTime()
	scanned, err := Scan(a.Path, io.NewSectionReader(f, 0, a.Size), a.Size)
	if err != nil {
		o.Err = err
		return o
	}
	if e, ok := rec.byDigest(scanned.Digest); ok && !force {
		present, err := im.present(ctx, e.Images)
		if err != nil {
			o.Err = err
			return o
		}
		if present {
			// A copy, or the same file touched: remember it by its new
			// name and time so that it is not read again at each start.
			e.Path, e.Size, e.ModTime = a.Path, a.Size, a.ModTime
			rec.put(e)
			o.Images, o.Skipped = e.Images, true
			fmt.Fprintf(out, "%s: imported before, with the same content (%s)\n", a.Path, strings.Join(e.Images, ", "))
			return o.withErr(im.save(*rec))
		}
	}
	timeout := im.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names, err := im.importOne(ctx, out, f, a, scanned)
	if err != nil {
		o.Err = bounded(ctx, a.Path, timeout, err)
		return o
	}
	o.Images = names
	rec.put(Imported{Digest: scanned.Digest, Path: a.Path, Size: a.Size, ModTime: a.ModTime, Images: names, Imported: im.now()})
	return o.withErr(im.save(*rec))
}

func (o Outcome) withErr(err error) Outcome {
	o.Err = err
	return o
}

func (im *Importer) importOne(ctx context.Context, out io.Writer, f *os.File, a Archive, s Scanned) ([]string, error) {
	rt, err := im.runtime(ctx)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s: importing %s (%s archive, %d entries, sha256 %s)\n", a.Path, size(a.Size), s.Format, s.Entries, s.Digest)
	start := im.now()
	step := im.ProgressStep
	if step <= 0 {
		step = DefaultProgressStep
	}
	r := &progress{r: io.NewSectionReader(f, 0, a.Size), total: a.Size, step: step, out: out, name: a.Path}
	names, err := rt.Import(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("image archive %s: containerd could not import it: %w", a.Path, err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("image archive %s names no image (docker save of an image ID, or an OCI layout whose index gives no full reference such as registry.k8s.io/pause:3.9): save it by name, e.g. docker save registry.k8s.io/pause:3.9 -o pause.tar", a.Path)
	}
	if !im.NoUnpack {
		for _, n := range names {
			fmt.Fprintf(out, "%s: unpacking %s\n", a.Path, n)
			if err := rt.Unpack(ctx, n); err != nil {
				return nil, fmt.Errorf("image archive %s: unpacking %s: %w", a.Path, n, err)
			}
		}
	}
	if names, err = im.tag(ctx, out, rt, a, names); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "%s: imported %s in %v\n", a.Path, strings.Join(names, ", "), im.now().Sub(start).Round(time.Millisecond))
	return names, nil
}

// tag gives each imported image its aliases, so that a pod naming the
// registry a mirror stands for finds the image saved from the mirror
// without pulling; the names returned (and recorded) include them.
func (im *Importer) tag(ctx context.Context, out io.Writer, rt Runtime, a Archive, names []string) ([]string, error) {
	if im.Aliases == nil {
		return names, nil
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	all := names
	for _, n := range names {
		for _, alias := range im.Aliases(n) {
			if have[alias] {
				continue
			}
			if err := rt.Tag(ctx, n, alias); err != nil {
				return nil, fmt.Errorf("image archive %s: tagging %s as %s: %w", a.Path, n, alias, err)
			}
			have[alias] = true
			all = append(all, alias)
			fmt.Fprintf(out, "%s: tagged %s as %s, the name pods give it: the node's registry configuration pulls %s from that mirror\n", a.Path, n, alias, alias)
		}
	}
	return all, nil
}

// bounded says that an archive ran out of its time bound, rather than
// the error the cancelled call returned.
func bounded(ctx context.Context, archive string, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("image archive %s: not imported within %v (%w): check containerd's log and the disk, or import it by hand with `edgecore.exe images import --timeout`", archive, timeout, ctx.Err())
	}
	return err
}

func (im *Importer) present(ctx context.Context, names []string) (bool, error) {
	rt, err := im.runtime(ctx)
	if err != nil {
		return false, err
	}
	missing, err := rt.Missing(ctx, names)
	if err != nil {
		return false, fmt.Errorf("asking containerd for the images %s: %w", strings.Join(names, ", "), err)
	}
	return len(missing) == 0, nil
}

func (im *Importer) runtime(ctx context.Context) (Runtime, error) {
	if im.rt != nil {
		return im.rt, nil
	}
	rt, err := im.Connect(ctx)
	if err != nil {
		return nil, err
	}
	im.rt = rt
	return rt, nil
}

func (im *Importer) close() {
	if im.rt != nil {
		im.rt.Close()
		im.rt = nil
	}
}

func (im *Importer) save(r Record) error {
	data, err := r.encode()
	if err == nil {
		err = im.WriteFile(im.RecordPath, data)
	}
	if err != nil {
		return fmt.Errorf("writing the record of imported images %s: %w; the images were imported, and are imported again at the next start", im.RecordPath, err)
	}
	return nil
}

func (im *Importer) now() time.Time {
	if im.Now != nil {
		return im.Now()
	}
	return time.Now()
}

// progress prints a line each step bytes read.
type progress struct {
	r          io.Reader
	total      int64
	read, next int64
	step       int64
	out        io.Writer
	name       string
}

func (p *progress) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.read += int64(n)
	if p.next == 0 {
		p.next = p.step
	}
	for p.read >= p.next && p.next < p.total {
		fmt.Fprintf(p.out, "%s: %s of %s read (%d%%)\n", p.name, size(p.next), size(p.total), p.next*100/p.total)
		p.next += p.step
	}
	return n, err
}

// size is a byte count as a person reads it.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
