package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/ospath"
	"github.com/kubeedge-windows/edgecore/config/registries"
	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/hostfs"
	"github.com/kubeedge-windows/edgecore/internal/runtimeinstall"
)

// ImportOptions are the inputs of `edgecore.exe images import PATH...`.
type ImportOptions struct {
	// Paths are archives, or folders whose *.tar archives are imported.
	Paths []string
	// ConfigFile gives containerd's endpoint when --endpoint is not
	// given; without one, the default configuration's is used.
	ConfigFile string
	// Endpoint is containerd's CRI endpoint (--endpoint).
	Endpoint    string
	Snapshotter string
	NoUnpack    bool
	Timeout     time.Duration
	Host        config.Host
}

// NewImportOptions are the command's defaults on d's host.
func NewImportOptions(d *deps.Dependencies) *ImportOptions {
	return &ImportOptions{ConfigFile: d.Layout.ConfigFile, Snapshotter: Snapshotter(d.Host.GOOS), Timeout: DefaultTimeout, Host: d.Host}
}

// AddFlags binds the command's flags to o; the defaults are o's values.
func (o *ImportOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "Configuration whose modules.edged.tailoredKubeletConfig.containerRuntimeEndpoint names containerd (when --endpoint is not given)")
	fs.StringVar(&o.Endpoint, "endpoint", o.Endpoint, "containerd's CRI endpoint, e.g. npipe://./pipe/containerd-containerd (default: the configuration's)")
	fs.StringVar(&o.Snapshotter, "snapshotter", o.Snapshotter, "Snapshotter the images are unpacked into: the one containerd's CRI plugin uses")
	fs.BoolVar(&o.NoUnpack, "no-unpack", o.NoUnpack, "Import the layers without unpacking them; the kubelet unpacks an image when a container first uses it")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "Time bound of each archive, unpacking included")
}

// Complete takes, without --endpoint, the endpoint from the configuration
// as d's host loads it, or from the default configuration when there is no
// configuration file yet. The command sets Paths from its arguments.
func (o *ImportOptions) Complete(d *deps.Dependencies) error {
	o.Host = d.Host
	if o.Endpoint != "" {
		return nil
	}
	cfg, _, err := config.Load(o.ConfigFile, o.Host)
	var missing *config.MissingFileError
	if errors.As(err, &missing) || errors.Is(err, fs.ErrNotExist) {
		cfg, err = config.Sample(config.KindDefault, o.Host)
	}
	if err != nil {
		return fmt.Errorf("--config %s: %w; or give containerd's endpoint with --endpoint", o.ConfigFile, err)
	}
	o.Endpoint = Endpoint(cfg)
	return nil
}

// Endpoint is the configuration's container runtime endpoint, "" when
// edged has none.
func Endpoint(cfg *v1alpha2.EdgeCoreConfig) string {
	if m := cfg.Modules; m != nil && m.Edged != nil && m.Edged.TailoredKubeletConfig != nil {
		return m.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint
	}
	return ""
}

// Validate checks the command's inputs.
func (o ImportOptions) Validate() error {
	var errs []error
	if len(o.Paths) == 0 {
		errs = append(errs, errors.New("no archive given: name image archives (docker save or OCI layout tarballs) or folders holding them, e.g. edgecore.exe images import D:\\images\\pause.tar"))
	}
	if o.Endpoint == "" {
		errs = append(errs, errors.New("--endpoint is empty and the configuration names no containerRuntimeEndpoint: give containerd's, e.g. --endpoint npipe://./pipe/containerd-containerd"))
	}
	if strings.TrimSpace(o.Snapshotter) == "" {
		errs = append(errs, fmt.Errorf("--snapshotter is empty: give the one containerd's CRI plugin uses (%s by default)", Snapshotter(o.Host.GOOS)))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout %v: give a positive duration such as 30m", o.Timeout))
	}
	return errors.Join(errs...)
}

// HostImporter is the importer of d's host: containerd at endpoint through
// its Go client, the archives checked with the host's ACLs, and the record
// in the kubeedge directory, written durably.
func HostImporter(d *deps.Dependencies, endpoint, snapshotter string) *Importer {
	return &Importer{
		Connect:    Containerd(endpoint, snapshotter),
		Trusted:    Access(d.Host.GOOS, d.ACLs),
		RecordPath: d.Layout.ImagesRecord,
		WriteFile:  recordWriter(d.Host.GOOS, d.FS),
		Aliases:    registryAliases(d.FS, d.Host.GOOS, runtimeinstall.RegistryDir(d.Layout)),
	}
}

// registryAliases gives registries.Aliases over the hosts.toml files of
// the node's registry configuration (what join --registry-config wrote
// into containerd's folder), read once, at the first image; none when
// there is no such folder. A hosts.toml that does not read is left out
// here: preflight names it.
func registryAliases(fsys hostfs.FS, goos, dir string) func(string) []string {
	var (
		once sync.Once
		eps  []registries.Endpoint
	)
	return func(name string) []string {
		once.Do(func() {
			entries, err := fsys.ReadDir(dir)
			if err != nil {
				return
			}
			for _, e := range entries {
				if !e.IsDir() {
					continue
				}
				data, err := fsys.ReadFile(ospath.Join(goos, dir, e.Name(), "hosts.toml"))
				if err != nil {
					continue
				}
				if got, err := registries.ReadHosts(e.Name(), data); err == nil {
					eps = append(eps, got...)
				}
			}
		})
		return registries.Aliases(eps, name)
	}
}

// recordWriter replaces the record durably. Before join there is no
// kubeedge directory, and no record is kept: join creates the directory
// restricted, which a record written first would not be.
func recordWriter(goos string, fsys hostfs.FS) func(path string, data []byte) error {
	return func(path string, data []byte) error {
		if _, err := fsys.Stat(ospath.Dir(goos, path)); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fsys.WriteFile(path, data)
	}
}

// RunImport imports the archives o names into containerd's k8s.io
// namespace, whatever the record says, printing each step to out.
func RunImport(ctx context.Context, out io.Writer, o ImportOptions, im *Importer) error {
	var archives []Archive
	for _, p := range o.Paths {
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("image archive %s: %w", p, err)
		}
		if info.IsDir() {
			found, err := Find([]string{p})
			if err != nil {
				return err
			}
			if len(found) == 0 {
				return fmt.Errorf("folder %s holds no image archive (*%s): put docker save or OCI layout tarballs there", p, Extension)
			}
			archives = append(archives, found...)
			continue
		}
		archives = append(archives, Archive{Path: p, Size: info.Size(), ModTime: info.ModTime()})
	}
	im.NoUnpack, im.Timeout = o.NoUnpack, o.Timeout
	outcomes, err := im.ImportAll(ctx, out, archives)
	n := 0
	for _, oc := range outcomes {
		if oc.Err == nil {
			n++
		}
	}
	fmt.Fprintf(out, "Imported %d of %d image archives into containerd's %s namespace.\n", n, len(archives), Namespace)
	return err
}

// ImportFolders imports the archives of dirs that were not imported yet
// into containerd at endpoint on d's host, as the node does at its start, and
// says so when the folders hold none: what join runs before it starts
// the service.
func ImportFolders(d *deps.Dependencies) func(ctx context.Context, out io.Writer, endpoint string, dirs []string) error {
	return func(ctx context.Context, out io.Writer, endpoint string, dirs []string) error {
		archives, err := Find(dirs)
		if err != nil {
			return err
		}
		if len(archives) == 0 {
			fmt.Fprintf(out, "no image archives (*%s) in %s\n", Extension, strings.Join(dirs, " or "))
			return nil
		}
		_, err = HostImporter(d, endpoint, Snapshotter(d.Host.GOOS)).ImportNew(ctx, out, archives)
		return err
	}
}
