//go:build windows

// Command keadmnode makes a Windows host the way upstream's keadm v1.23
// joins it, with upstream's own code from this module graph wherever keadm
// exports it: the configuration is upstream's defaults for Windows
// (v1alpha2.NewDefaultEdgeCoreConfig, whose paths and Windows values only
// a Windows build has) with keadm's join edits, validated and written by
// upstream; the service is created and started by keadm's own extsystem;
// the release tarball is unpacked by keadm's own util.DecompressTarGz.
// It must be built for Windows and runs under Wine in the tests.
//
// keadm's join (keadm/cmd/keadm/app/cmd/edge/join_windows.go, join) itself
// cannot run under Wine: it copies files and asks for services through
// PowerShell. What it does in between is done here in the same order, each
// step naming the function of keadm it stands for; the edits of
// createEdgeConfigFiles, which keadm does not export, are the only lines
// written again (editJoinConfig).
//
// Two subcommands:
//
//	keadmnode config --out DIR [join flags]
//	    writes DIR\join.yaml, the configuration as keadm's join writes it
//	    (the token in it), and DIR\node.yaml, as upstream's edgecore
//	    leaves it once the node's certificates are issued (its
//	    cleanupToken: the loaded configuration marshalled again with the
//	    token blanked). --node-ip replaces the address the defaults take
//	    from the host, so that the files do not depend on the machine.
//	keadmnode join --edgecore EXE [join flags]
//	    makes this host a keadm node running EXE as the service
//	    "edgecore", and waits until that edgecore has fetched the node's
//	    certificates with the token (then removes the bootstrap file, as
//	    keadm does).
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha512"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	apiconsts "github.com/kubeedge/api/apis/common/constants"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2/validation"
	edgeoptions "github.com/kubeedge/kubeedge/edge/cmd/edgecore/app/options"
	"github.com/kubeedge/kubeedge/keadm/cmd/keadm/app/cmd/common"
	"github.com/kubeedge/kubeedge/keadm/cmd/keadm/app/cmd/util"
	extsys "github.com/kubeedge/kubeedge/keadm/cmd/keadm/app/cmd/util/extsystem"
	pkgutil "github.com/kubeedge/kubeedge/pkg/util"
	"github.com/kubeedge/kubeedge/pkg/version"
	"github.com/kubeedge/kubeedge/pkg/viaduct/pkg/api"
)

// joinFlags are the flags of `keadm join` this tool takes, with keadm's
// defaults (edge/join.go newOption, join_windows.go AddJoinOtherFlags).
type joinFlags struct {
	common.JoinOptions
	labels, sets string
	logPath      string
	nodeIP       string
}

func addJoinFlags(fs *flag.FlagSet) *joinFlags {
	f := &joinFlags{}
	fs.StringVar(&f.KubeEdgeVersion, "kubeedge-version", strings.TrimPrefix(version.Get().String(), "v"), "keadm's --kubeedge-version")
	fs.StringVar(&f.CloudCoreIPPort, "cloudcore-ipport", "", "keadm's --cloudcore-ipport")
	fs.StringVar(&f.EdgeNodeName, "edgenode-name", "", "keadm's --edgenode-name")
	fs.StringVar(&f.RemoteRuntimeEndpoint, "remote-runtime-endpoint", apiconsts.DefaultRemoteRuntimeEndpoint, "keadm's --remote-runtime-endpoint")
	fs.StringVar(&f.Token, "token", "", "keadm's --token")
	fs.StringVar(&f.CertPort, "certport", "", "keadm's --certport")
	fs.StringVar(&f.HubProtocol, "hub-protocol", api.ProtocolTypeWS, "keadm's --hub-protocol")
	fs.StringVar(&f.labels, "labels", "", "keadm's --labels, comma separated")
	fs.StringVar(&f.sets, "set", "", "keadm's --set values, separated by ;")
	fs.StringVar(&f.logPath, "log-file", filepath.Join(apiconsts.KubeEdgeLogPath, "edgecore.log"), "keadm's --log-file")
	fs.StringVar(&f.nodeIP, "node-ip", "", "the host's address in place of the one the defaults read from this machine")
	return f
}

func (f *joinFlags) complete() error {
	if f.labels != "" {
		f.Labels = strings.Split(f.labels, ",")
	}
	if f.sets != "" {
		f.Sets = strings.Split(f.sets, ";")
	}
	if f.CloudCoreIPPort == "" || f.EdgeNodeName == "" || f.Token == "" {
		return errors.New("give --cloudcore-ipport, --edgenode-name and --token, as keadm join needs them")
	}
	return nil
}

// joinConfig is the configuration keadm's createEdgeConfigFiles writes
// on a host where none exists yet: upstream's defaults with the join's
// edits, validated by upstream.
func joinConfig(f *joinFlags) (*v1alpha2.EdgeCoreConfig, error) {
	cfg := v1alpha2.NewDefaultEdgeCoreConfig()
	if f.nodeIP != "" {
		cfg.Modules.Edged.NodeIP = f.nodeIP
	}
	if err := editJoinConfig(cfg, &f.JoinOptions); err != nil {
		return nil, err
	}
	if errs := validation.ValidateEdgeCoreConfiguration(cfg); len(errs) > 0 {
		return nil, errors.New(pkgutil.SpliceErrors(errs.ToAggregate().Errors()))
	}
	return cfg, nil
}

// editJoinConfig makes the edits of keadm v1.23.1's createEdgeConfigFiles
// (edge/join_windows.go), in its order; keadm does not export them.
func editJoinConfig(cfg *v1alpha2.EdgeCoreConfig, opt *common.JoinOptions) error {
	cfg.EdgeCoreVersion = version.Get().String()
	if opt.Token != "" {
		cfg.Modules.EdgeHub.Token = opt.Token
	}
	if opt.EdgeNodeName != "" {
		cfg.Modules.Edged.HostnameOverride = opt.EdgeNodeName
	}
	if opt.RemoteRuntimeEndpoint != "" {
		cfg.Modules.Edged.TailoredKubeletConfig.ContainerRuntimeEndpoint = opt.RemoteRuntimeEndpoint
		cfg.Modules.Edged.TailoredKubeletConfig.ImageServiceEndpoint = opt.RemoteRuntimeEndpoint
	}
	host, _, err := net.SplitHostPort(opt.CloudCoreIPPort)
	if err != nil {
		return fmt.Errorf("get current host and port failed: %v", err)
	}
	certPort := opt.CertPort
	if certPort == "" {
		certPort = "10002"
	}
	cfg.Modules.EdgeHub.HTTPServer = "https://" + net.JoinHostPort(host, certPort)
	switch opt.HubProtocol {
	case api.ProtocolTypeQuic:
		cfg.Modules.EdgeHub.Quic.Enable = true
		cfg.Modules.EdgeHub.WebSocket.Enable = false
		cfg.Modules.EdgeHub.Quic.Server = opt.CloudCoreIPPort
		cfg.Modules.EdgeHub.WebSocket.Server = net.JoinHostPort(host, strconv.Itoa(apiconsts.DefaultWebSocketPort))
	case api.ProtocolTypeWS:
		cfg.Modules.EdgeHub.Quic.Enable = false
		cfg.Modules.EdgeHub.WebSocket.Enable = true
		cfg.Modules.EdgeHub.Quic.Server = net.JoinHostPort(host, strconv.Itoa(apiconsts.DefaultQuicPort))
		cfg.Modules.EdgeHub.WebSocket.Server = opt.CloudCoreIPPort
	default:
		return fmt.Errorf("unsupported hub of protocol: %s", opt.HubProtocol)
	}
	cfg.Modules.EdgeStream.TunnelServer = net.JoinHostPort(host, strconv.Itoa(apiconsts.DefaultTunnelPort))
	if len(opt.Labels) > 0 {
		labels := map[string]string{}
		for _, l := range opt.Labels {
			k, v, _ := strings.Cut(l, "=")
			if k != "" {
				labels[k] = v
			}
		}
		cfg.Modules.Edged.NodeLabels = labels
	}
	for _, set := range opt.Sets {
		if err := util.ParseSet(cfg, set); err != nil {
			return err
		}
	}
	return nil
}

// nodeConfig is what upstream's edgecore leaves of the file at path once
// the certificates are issued (edge/cmd/edgecore/app/server.go): it loads
// the file with its options, writes the version back when it differs,
// and cleanupToken marshals the loaded configuration with the token
// blanked.
func nodeConfig(path string) ([]byte, error) {
	opts := edgeoptions.NewEdgeCoreOptions()
	opts.ConfigFile = path
	cfg, err := opts.Config()
	if err != nil {
		return nil, err
	}
	cfg.EdgeCoreVersion = version.Get().String()
	cfg.Modules.EdgeHub.Token = ""
	return yaml.Marshal(cfg)
}

func writeConfigs(out string, f *joinFlags) error {
	cfg, err := joinConfig(f)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	join := filepath.Join(out, "join.yaml")
	if err := cfg.WriteTo(join); err != nil {
		return err
	}
	node, err := nodeConfig(join)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "node.yaml"), node, 0o644)
}

// tarball writes the release archive keadm downloads into the tarball
// path (C:\etc\kubeedge\ by default) with exe as its edge\edgecore.exe,
// and the checksum file keadm compares it with.
func tarball(dir, ver, exe string) (string, error) {
	name := fmt.Sprintf("kubeedge-v%s-windows-%s", ver, runtime.GOARCH)
	path := filepath.Join(dir, name+".tar.gz")
	src, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return "", err
	}
	out, err := os.Create(path)
	if err != nil {
		return "", err
	}
	sum := sha512.New()
	gz := gzip.NewWriter(io.MultiWriter(out, sum))
	tw := tar.NewWriter(gz)
	for _, d := range []string{name + "/", name + "/edge/"} {
		if err := tw.WriteHeader(&tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}); err != nil {
			return "", err
		}
	}
	if err := tw.WriteHeader(&tar.Header{Name: name + "/edge/edgecore.exe", Typeflag: tar.TypeReg, Mode: 0o755, Size: st.Size()}); err != nil {
		return "", err
	}
	if _, err := io.Copy(tw, src); err != nil {
		return "", err
	}
	for _, c := range []io.Closer{tw, gz, out} {
		if err := c.Close(); err != nil {
			return "", err
		}
	}
	check := filepath.Join(dir, "checksum_"+name+".tar.gz.txt")
	if err := os.WriteFile(check, []byte(fmt.Sprintf("%x", sum.Sum(nil))), 0o644); err != nil {
		return "", err
	}
	return path, nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// removeTree removes dir and what is in it, deepest entry first.
func removeTree(dir string) error {
	var paths []string
	if err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			paths = append(paths, p)
		}
		return err
	}); err != nil {
		return err
	}
	for i := len(paths) - 1; i >= 0; i-- {
		if err := os.Remove(paths[i]); err != nil {
			return err
		}
	}
	return nil
}

func join(f *joinFlags, edgecore string, wait time.Duration) error {
	step := func(s string) { fmt.Printf("[keadmnode] %s\n", s) }
	step("Create the necessary directories (keadm edge/join.go createDirs)")
	for _, d := range []string{apiconsts.KubeEdgePath, util.KubeEdgeConfigDir, apiconsts.KubeEdgeLogPath, common.KubeEdgeSocketPath} {
		if err := os.MkdirAll(d, os.ModePerm); err != nil {
			return fmt.Errorf("create %s folder path failed: %v", d, err)
		}
	}

	step("Download the necessary resources (keadm util.DownloadEdgecoreBin, with the tarball already in the tarball path)")
	ver := strings.TrimPrefix(f.KubeEdgeVersion, "v")
	tgz, err := tarball(apiconsts.KubeEdgePath, ver, edgecore)
	if err != nil {
		return err
	}
	if err := util.DecompressTarGz(tgz, apiconsts.KubeEdgePath); err != nil {
		return err
	}
	extracted := filepath.Join(apiconsts.KubeEdgePath, fmt.Sprintf("kubeedge-v%s-windows-%s", ver, runtime.GOARCH))
	if err := os.MkdirAll(apiconsts.KubeEdgeUsrBinPath, os.ModePerm); err != nil {
		return err
	}
	binpath := filepath.Join(apiconsts.KubeEdgeUsrBinPath, apiconsts.KubeEdgeBinaryName+".exe")
	if err := copyFile(filepath.Join(extracted, "edge", "edgecore.exe"), binpath); err != nil {
		return err
	}
	// keadm removes it with PowerShell's Remove-Item -Recurse
	// (util.removeFile), entry by entry; Go's os.RemoveAll fails under
	// Wine ("Invalid function").
	if err := removeTree(extracted); err != nil {
		return err
	}

	step("Register edgecore as a native Windows service (keadm extsystem)")
	svc, err := extsys.GetExtSystem()
	if err != nil {
		return fmt.Errorf("detect windows service manager failed: %v", err)
	}
	cfgPath := filepath.Join(apiconsts.KubeEdgePath, "config/edgecore.yaml")
	if !svc.ServiceExists(apiconsts.KubeEdgeBinaryName) {
		if err := svc.ServiceCreate(apiconsts.KubeEdgeBinaryName, binpath, []string{"--config", cfgPath, "--log-file", f.logPath}, nil); err != nil {
			return fmt.Errorf("create windows service for edgecore failed: %v", err)
		}
		// keadm sets the start type through PowerShell and only warns
		// when that fails (as it does under Wine, which has none);
		// CreateService has already made it automatic.
		if err := svc.ServiceEnable(apiconsts.KubeEdgeBinaryName); err != nil {
			fmt.Printf("[keadmnode] warning: enable service failed: %v\n", err)
		}
	}

	step("Write the token to the bootstrap file (keadm edge/join.go createBootstrapFile)")
	if err := os.WriteFile(apiconsts.BootstrapFile, []byte(f.Token), 0o640); err != nil {
		return fmt.Errorf("create bootstrap file failed: %v", err)
	}
	defer os.Remove(apiconsts.BootstrapFile)

	step("Generate EdgeCore default configuration (keadm createEdgeConfigFiles)")
	cfg, err := joinConfig(f)
	if err != nil {
		return fmt.Errorf("create edge config file failed: %v", err)
	}
	if err := cfg.WriteTo(cfgPath); err != nil {
		return fmt.Errorf("create edge config file failed: %v", err)
	}

	step("Run EdgeCore daemon (keadm runEdgeCore)")
	if err := svc.ServiceStart(apiconsts.KubeEdgeBinaryName); err != nil {
		return fmt.Errorf("start edgecore failed: %v", err)
	}

	step("Wait for the certificates edgecore applies for with the token")
	hub := cfg.Modules.EdgeHub
	deadline := time.Now().Add(wait)
	for {
		all := true
		for _, p := range []string{hub.TLSCAFile, hub.TLSCertFile, hub.TLSPrivateKeyFile} {
			if _, err := os.Stat(p); err != nil {
				all = false
			}
		}
		if all {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("edgecore did not fetch the certificates within %v", wait)
		}
		time.Sleep(time.Second)
	}
	step("Install Complete!")
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: keadmnode config|join [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	f := addJoinFlags(fs)
	var err error
	switch os.Args[1] {
	case "config":
		out := fs.String("out", "", "the folder to write join.yaml and node.yaml to")
		fs.Parse(os.Args[2:])
		if err = f.complete(); err == nil {
			err = writeConfigs(*out, f)
		}
	case "join":
		exe := fs.String("edgecore", "", "the edgecore.exe the release tarball carries")
		wait := fs.Duration("wait", 5*time.Minute, "how long edgecore has to fetch the certificates (keadm waits 300 s)")
		fs.Parse(os.Args[2:])
		if err = f.complete(); err == nil {
			err = join(f, *exe, *wait)
		}
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "keadmnode: %v\n", err)
		os.Exit(1)
	}
}
