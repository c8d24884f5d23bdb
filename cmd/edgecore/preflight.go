package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/config"
	"github.com/kubeedge-windows/edgecore/config/cni"
	"github.com/kubeedge-windows/edgecore/internal/preflight"
)

// newPreflightCommand checks the host before edgecore is started or joined.
func newPreflightCommand() *cobra.Command {
	var (
		configFile string
		offline    bool
	)
	cmd := &cobra.Command{
		Use:   "preflight",
		Short: "Check this host for what edgecore needs, with a fix for every failure",
		Long: "Check the Windows build, the Containers feature, Administrator rights, containerd and its CNI\n" +
			"configuration, the sandbox image, the way to cloudcore, the clock, running kubelets and free disk.\n" +
			"Exits 1 when any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, note, err := preflightConfig(configFile)
			if err != nil {
				return err
			}
			if note != "" {
				fmt.Fprintln(cmd.OutOrStdout(), note)
			}
			probes := preflight.SystemProbes()
			if offline {
				// Air-gapped sites have no registry to ask; the row then
				// says the image was not checked.
				probes.ImagePlatforms = nil
			}
			rows := preflight.Run(context.Background(), cfg, probes)
			if err := preflight.Render(cmd.OutOrStdout(), rows); err != nil {
				return err
			}
			if code := preflight.ExitCode(rows); code != 0 {
				return &ExitError{Code: code, Err: errors.New("preflight found problems; fix the FAIL rows above")}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configFile, "config", config.DefaultConfigFile(runtime.GOOS), "Configuration whose settings are checked")
	cmd.Flags().BoolVar(&offline, "offline", false, "Do not ask the image registry whether the sandbox image has a Windows variant")
	return cmd
}

// preflightConfig takes the checked settings from the configuration file, or
// from the defaults when there is none yet (preflight runs before join).
func preflightConfig(path string) (preflight.Config, string, error) {
	host := config.CurrentHost(runtime.GOOS)
	c, _, err := config.Load(path, host)
	note := ""
	var missing *config.MissingFileError
	switch {
	case errors.As(err, &missing):
		note = fmt.Sprintf("No configuration at %s yet: checking the defaults.", path)
		if c, err = config.Sample(config.KindDefault, host); err != nil {
			return preflight.Config{}, "", err
		}
	case err != nil:
		return preflight.Config{}, "", err
	}
	e := c.Modules.Edged
	confDir, binDir := cni.ContainerdDirs(os.Getenv("ProgramFiles"))
	pc := preflight.Config{
		CRIEndpoint:  e.TailoredKubeletConfig.ContainerRuntimeEndpoint,
		CNIConfDir:   confDir,
		CNIBinDir:    binDir,
		ClusterDNS:   e.TailoredKubeletConfig.ClusterDNS,
		SandboxImage: e.PodSandboxImage,
		RootDir:      e.RootDirectory,
	}
	if hub := c.Modules.EdgeHub; hub.Enable {
		ws := ""
		if hub.WebSocket != nil && hub.WebSocket.Enable {
			ws = hub.WebSocket.Server
		}
		pc.CloudCore = preflight.CloudCoreEndpoints(ws, hub.HTTPServer)
		pc.Certificates = []string{hub.TLSCAFile, hub.TLSCertFile}
	}
	return pc, note, nil
}
