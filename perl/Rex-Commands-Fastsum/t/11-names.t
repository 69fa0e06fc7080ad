# Names that break stock Rex (quotes, $, backticks, names that are not
# ASCII or UTF-8, a leading -, newlines) travel as data both ways; templates.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

my $host = TestHost->start;
my $d    = File::Temp->newdir;
my @names = (
  "quote's.txt", 'dollar $(touch PWNED) `touch PWNED`.txt', "-leading dash",
  "\x{c3}\x{a9}t\x{c3}\x{a9}/caf\x{c3}\x{a9}.txt", "latin1-\xe9.txt", "new\nline.txt",
  "back\\slash", "sp ace/ and \"dq\"", ( 'long' x 40 ) . '/' . ( 'n' x 120 ),
);
write_file( "$d/src/$_", "content of $_\n" ) for @names;
mkdir "$d/dst";
mkdir "$d/down";

my ( $status, $out ) = $host->run_rex(
  use  => 'use Rex::Commands::Sync',
  body => "sync_up '$d/src', '$d/stock';",
);
mkdir "$d/stock";
( $status, $out ) = $host->run_rex(
  use  => 'use Rex::Commands::Sync',
  body => "sync_up '$d/src', '$d/stock';",
);
isnt( $status, 0, 'stock Rex fails on these names' );

( $status, $out ) = $host->run_rex(
  use  => 'use Rex::Commands::Fastsum',
  body => "sync_up '$d/src', '$d/dst'; sync_down '$d/dst', '$d/down';",
);
is( $status, 0, 'ours carries them up and down' ) or diag($out);
is_deeply( read_tree("$d/dst"),  read_tree("$d/src"), 'up: byte for byte' );
is_deeply( read_tree("$d/down"), read_tree("$d/src"), 'down: byte for byte' );
ok( !-e "$d/PWNED" && !-e "$host->{dir}/PWNED" && !-e "$ENV{HOME}/PWNED", 'no name ran as a command' );

# Templates: rendered, sent without .tpl, and only when the bytes differ.
write_file( "$d/tsrc/conf.tpl", "port=<%= 80 + 1 %>\n" );
mkdir "$d/tdst";
my $body = "sync_up '$d/tsrc', '$d/tdst', { on_change => sub { print \"CHANGED \$_\\n\" for \@_ } };";
( $status, $out ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', body => $body );
is( $status, 0, 'template sync ran' ) or diag($out);
is( read_tree("$d/tdst")->{conf}[0], "port=81\n", 'the template was rendered as conf' );
like( $out, qr/CHANGED \Q$d\E\/tdst\/conf$/m, 'on_change names the file written' );
( $status, $out ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', body => $body );
unlike( $out, qr/CHANGED/, 'an unchanged rendering is not sent again' );

# A file on the host where the local tree now has a directory.
write_file( "$d/typesrc/was-a-file/inside.txt", "inside\n" );
write_file( "$d/typedst/was-a-file", "a file\n" );
( $status, $out ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', body => "sync_up '$d/typesrc', '$d/typedst';" );
is( $status, 0, 'a file gives way to a directory' ) or diag($out);
is_deeply( read_tree("$d/typedst"), read_tree("$d/typesrc"), 'and the tree landed' );

done_testing;
