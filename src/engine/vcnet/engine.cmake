# The vcnet engine: its folder over the core, the topologies and L1, and the option tables of its
# command-line tools (cli_net.c, cli_faults.c: cs_engine_ops.tools).
cs_module(cs_vcnet engine/vcnet DEPS cs_core cs_topo cs_expand cs_cli_opts)
