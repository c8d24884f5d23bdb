package main

import (
	"github.com/spf13/cobra"

	"github.com/kubeedge-windows/edgecore/internal/deps"
	"github.com/kubeedge-windows/edgecore/internal/images"
)

// newImagesCommand imports image archives into containerd by hand.
func newImagesCommand(d *deps.Dependencies) *cobra.Command {
	layout := d.Layout
	cmd := &cobra.Command{
		Use:   "images",
		Short: "Import image archives into containerd for hosts without a registry",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	o := images.NewImportOptions(d)
	imp := &cobra.Command{
		Use:   "import PATH...",
		Short: "Import image archives (docker save or OCI layout tarballs) into containerd's k8s.io namespace",
		Long: "Import image archives, or the *.tar archives of folders, into containerd's k8s.io namespace, where the\n" +
			"kubelet finds them, and unpack them. The node does the same at join and at each start with the archives in\n" +
			"the images folder beside edgecore.exe and in " + layout.ImagesDir + ", importing only those it has not\n" +
			"imported yet; this command imports what it is given whatever was imported before. An archive, its folder\n" +
			"and the folders above must be changeable by administrators only. Each archive is bounded: at most\n" +
			"16 GiB, 10000 entries and --timeout. Run it from PowerShell started with \"Run as administrator\".",
		Example: `  edgecore.exe images import D:\images\pause.tar` + "\n" + `  edgecore.exe images import D:\images --no-unpack`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Paths = args
			if err := prepare(o, d); err != nil {
				return err
			}
			ctx, stop := interruptible(cmd)
			defer stop()
			return images.RunImport(ctx, cmd.OutOrStdout(), *o, images.HostImporter(d, o.Endpoint, o.Snapshotter))
		},
	}
	o.AddFlags(imp.Flags())
	cmd.AddCommand(imp)
	return cmd
}
