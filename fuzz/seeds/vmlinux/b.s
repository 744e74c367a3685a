# A second translation unit: its own local `helper` (a name defined twice).
	.text
	.type helper, @function
helper:
	.skip 24
	.size helper, 24
	.globl do_sys_open
	.type do_sys_open, @function
do_sys_open:
	.skip 40
	.size do_sys_open, 40
