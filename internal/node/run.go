package node

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	netutil "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/klog/v2"

	"github.com/kubeedge/api/apis/common/constants"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/beehive/pkg/core"
	"github.com/kubeedge/kubeedge/edge/cmd/edgecore/app/options"
	"github.com/kubeedge/kubeedge/edge/pkg/edgehub/certificate"
	"github.com/kubeedge/kubeedge/pkg/features"
	upstreamversion "github.com/kubeedge/kubeedge/pkg/version"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/internal/envcheck"
	"github.com/kubeedge-windows/edgecore/internal/hostprobe"
	"github.com/kubeedge-windows/edgecore/internal/images"
	"github.com/kubeedge-windows/edgecore/internal/memlimit"
	"github.com/kubeedge-windows/edgecore/internal/modules"
	"github.com/kubeedge-windows/edgecore/internal/protect"
	"github.com/kubeedge-windows/edgecore/internal/version"
	"github.com/kubeedge-windows/edgecore/windows/proc"
	"github.com/kubeedge-windows/edgecore/windows/service"
)

// Run loads the configuration, prepares the host and runs the edge modules
// until ctx ends.
func Run(ctx context.Context, opts Options) error {
	host := opts.Host
	cfg, rewrites, err := config.Load(opts.ConfigFile, host)
	if err != nil {
		return err
	}
	for _, r := range rewrites {
		klog.InfoS("Rewrote config value into its Windows form", "field", r.Field, "from", r.From, "to", r.To)
	}
	// As early as possible: start-up makes the heap's first peak.
	if err := configureMemory(opts.ConfigFile, opts.MemoryLimit, cfg); err != nil {
		return err
	}
	cfg, err = publishToUpstream(opts.ConfigFile, cfg)
	if err != nil {
		return err
	}

	if cfg.Modules.EdgeHub.Token != "" {
		go removeTokenOnceCertified(opts.ConfigFile)
	}
	if err := readBootstrapToken(cfg); err != nil {
		return err
	}
	if err := features.DefaultMutableFeatureGate.SetFromMap(cfg.FeatureGates); err != nil {
		return fmt.Errorf("config file %s: featureGates: %w", opts.ConfigFile, err)
	}
	klog.InfoS("Starting edgecore", "version", version.Get().Version, "kubeedge", upstreamversion.Get().GitVersion,
		"commit", version.Get().GitCommit, "config", opts.ConfigFile)

	// Before any module starts: edgehub writes the node's key and
	// certificates, edged Secrets, the upgrade agent acts on the journal.
	exe, err := os.Executable()
	if err != nil {
		exe = ""
	}
	if err := prepareFiles(cfg, host, opts.ConfigFile, exe, opts.asService, protect.HostACLs()); err != nil {
		return err
	}
	// Upstream skips the check when the metaserver is on: then a kubelet
	// may legitimately talk to edgecore on the same host.
	skip := opts.SkipEnvironmentCheck || os.Getenv("CHECK_EDGECORE_ENVIRONMENT") == "false" ||
		cfg.Modules.MetaManager.MetaServer.Enable
	if !skip {
		if err := checkProcesses(); err != nil {
			return err
		}
	}
	// A service that Windows would not wait for as long as its pods need
	// at a host shutdown does not start.
	shutdown := config.NodeShutdownOf(cfg, host.GOOS)
	if opts.asService {
		if err := checkPreShutdown(opts.ConfigFile, shutdown, service.Query); err != nil {
			return err
		}
	}
	if iface := cfg.Modules.Edged.CustomInterfaceName; iface != "" {
		ip, err := netutil.ChooseBindAddressForInterface(iface)
		if err != nil {
			return fmt.Errorf("modules.edged.customInterfaceName: no usable address on interface %q: %w", iface, err)
		}
		cfg.Modules.Edged.NodeIP = ip.String()
		klog.InfoS("Using the address of the custom interface", "interface", iface, "nodeIP", cfg.Modules.Edged.NodeIP)
	}

	if ed := cfg.Modules.Edged; ed != nil && ed.Enable && ed.TailoredKubeletConfig != nil {
		// Only the CRI probe, taken once: the wait polls four times a
		// second and needs nothing else of the host.
		cri := hostprobe.System().CRI
		probe := func(ctx context.Context, endpoint string) error {
			// A runtime that accepts the connection but never answers
			// counts as not there yet.
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := cri(ctx, endpoint)
			return err
		}
		if err := waitForRuntime(ctx, ed.TailoredKubeletConfig.ContainerRuntimeEndpoint, probe, runtimePollInterval, runtimeLogInterval); err != nil {
			klog.InfoS("Stopped before the container runtime answered", "reason", err)
			return nil
		}
		endpoint := ed.TailoredKubeletConfig.ContainerRuntimeEndpoint
		importImages(ctx, images.HostImporter(host, endpoint, images.Snapshotter(host.GOOS)), images.Dirs(config.NewLayout(host), exe))
	}
	// Before edged is created: the kubelet's node shutdown manager
	// registers with the service once it runs.
	installNodeShutdown(shutdown)
	upgrades := modules.NewUpgradeAgent(ctx, host, cfg, opts.ConfigFile)
	modules.Register(cfg, host.GOOS, upgrades)
	// An upgrade that restarted the service into this process (or was cut
	// short by a power loss) is finished or rolled back from here.
	upgrades.Watch(ctx)
	if features.DefaultFeatureGate.Enabled(features.ModuleRestart) {
		core.EnableModuleRestart()
	}
	core.RunContext(ctx)
	closeDatabase(cfg.DataBase)
	klog.Info("edgecore stopped")
	return nil
}

// configureMemory sets the Go runtime's soft memory limit (see
// internal/memlimit), from kubeReserved when the kubelet has one.
func configureMemory(path string, flag memlimit.Setting, cfg *v1alpha2.EdgeCoreConfig) error {
	var reserved map[string]string
	if m := cfg.Modules; m != nil && m.Edged != nil && m.Edged.TailoredKubeletConfig != nil {
		reserved = m.Edged.TailoredKubeletConfig.KubeReserved
	}
	p, err := memlimit.Configure(flag, reserved)
	if err != nil {
		return fmt.Errorf("config file %s: modules.edged.tailoredKubeletConfig: %w", path, err)
	}
	klog.InfoS("Go memory policy", "policy", p.String())
	return nil
}

// publishToUpstream makes the loaded configuration the one upstream packages
// read through options.GetEdgeCoreConfig (node upgrade, backup, image
// pre-pull, the metaserver), and returns that shared instance.
func publishToUpstream(path string, cfg *v1alpha2.EdgeCoreConfig) (*v1alpha2.EdgeCoreConfig, error) {
	opts := options.NewEdgeCoreOptions()
	opts.ConfigFile = path
	shared, err := opts.Config()
	if err != nil {
		return nil, err
	}
	*shared = *cfg
	return shared, nil
}

// removeTokenOnceCertified blanks the token in the config file when edgehub
// signals that the node certificates have been issued with it.
func removeTokenOnceCertified(path string) {
	<-certificate.CleanupTokenChan
	if err := config.RemoveToken(path); err != nil {
		klog.ErrorS(err, "The join token could not be removed from the config file; remove modules.edgeHub.token by hand", "config", path)
		return
	}
	klog.InfoS("Node certificates issued; removed the join token from the config file", "config", path)
}

// readBootstrapToken takes the token from upstream's bootstrap file when
// keadm left one, as upstream edgecore does.
func readBootstrapToken(cfg *v1alpha2.EdgeCoreConfig) error {
	data, err := os.ReadFile(constants.BootstrapFile)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read bootstrap token file %s: %w", constants.BootstrapFile, err)
	}
	cfg.Modules.EdgeHub.Token = strings.TrimSpace(string(data))
	return nil
}

func checkProcesses() error {
	list, err := proc.List()
	if err != nil {
		// Listing processes needs rights a restricted account may lack;
		// the check is a safety net, not a reason to refuse to start. What
		// was listed before the error is still checked.
		klog.Warningf("Cannot list processes to check for a running kubelet: %v", err)
	}
	return envcheck.CheckProcesses(runtime.GOOS, list)
}
