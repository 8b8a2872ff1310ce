package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/ccsets/ccs/retrieve"
	"github.com/ccsets/ccs/retrieve/clickhouse"
)

// collectionCommand groups what is done to a collection in a database.
func collectionCommand() *command {
	return &command{
		name:    "collection",
		args:    "load [flags]",
		short:   "manage collections in a database (load: write an .npz/.npy/.parquet collection into ClickHouse)",
		subName: "ACTION",
		sub:     []*command{collectionLoadCommand()},
	}
}

// collectionLoadOptions are ccs collection load's inputs.
type collectionLoadOptions struct {
	DB, In, Cluster string
	Append, Quiet   bool
	Batch           int
}

func collectionLoadCommand() *command {
	return newCommand("load", "-db clickhouse://HOST:PORT/DATABASE.TABLE -in FILE [-cluster NAME] [-append] [-batch 50000] [-quiet]",
		"write a collection file (.npz, .npy or .parquet) into a ClickHouse table, or over a cluster's shards; the table appears only once every row is in",
		func(fs *flag.FlagSet, o *collectionLoadOptions) func() error {
			fs.StringVar(&o.DB, "db", "", "the table, `clickhouse://[user[:password]@]host:port/database.table` (created; with -cluster, the Distributed table)")
			fs.StringVar(&o.In, "in", "", "collection `file` (.npz or .safetensors: \"embeddings\" or \"anchors\", \"ids\" or \"index\"; .npy; .parquet)")
			fs.StringVar(&o.Cluster, "cluster", "", "spread the rows over the shards of the server's cluster `NAME` (remote_servers): TABLE_local on each shard, the Distributed table TABLE")
			fs.BoolVar(&o.Append, "append", false, "add the rows to an existing table of the same dimension (ids, or string ids, the table holds already are refused)")
			fs.IntVar(&o.Batch, "batch", 50_000, "rows per INSERT")
			fs.BoolVar(&o.Quiet, "quiet", false, "no progress on stderr")
			return nil
		}, runCollectionLoad)
}

func runCollectionLoad(ctx context.Context, o collectionLoadOptions, out *output) error {
	if err := required("collection load", "db", o.DB, "in", o.In); err != nil {
		return err
	}
	if o.Batch < 1 {
		return usagef("collection load: -batch %d: want at least 1", o.Batch)
	}
	t, err := clickhouse.ParseURL(o.DB)
	if err != nil {
		return usagef("collection load: %v", err)
	}
	c, err := retrieve.ReadCollection(o.In)
	if err != nil {
		return err
	}
	start := time.Now()
	opt := clickhouse.LoadOptions{Cluster: o.Cluster, Append: o.Append, BatchRows: o.Batch}
	if !o.Quiet {
		opt.Progress = func(done, total int) {
			el := time.Since(start)
			fmt.Fprintf(out.stderr, "loaded %d of %d rows  %v  %.0f rows/s\n", done, total, el.Round(time.Second), float64(done)/el.Seconds())
		}
	}
	if err := clickhouse.Load(ctx, t, c, opt); err != nil {
		return fmt.Errorf("%s into %s: %w", o.In, t, err)
	}
	el := time.Since(start)
	fmt.Fprintf(out.stdout, "wrote %d rows of dimension %d into %s in %v (%.0f rows/s)\n", c.N, c.D, t, el.Round(time.Millisecond), float64(c.N)/el.Seconds())
	return nil
}
