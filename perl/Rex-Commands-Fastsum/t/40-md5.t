# md5 as Rex::Commands::MD5's (same digests, same errors), and checksums of
# many files in few commands, against Perl's own Digest::MD5 / Digest::SHA.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use Digest::MD5 ();
use Digest::SHA ();
use lib 't/lib';
use TestHost qw(write_file);

my $host = TestHost->start;
my $d    = File::Temp->newdir;
my @files = map {"$d/f$_.txt"} 1 .. 45;
push @files, "$d/quote's \$x.txt";
write_file( $_, "content of $_\n" x 3 ) for @files;
my $list = join( ', ', map { "'" . s/'/\\'/gr . "'" } @files );

my $body = <<"BODY";
my \$sums = checksums( [ $list ], algorithm => 'sha256' );
print "SHA256 \$_ \$sums->{\$_}\\n" for sort keys %\$sums;
my \$md5 = md5_many( $list );
print "MD5 \$_ \$md5->{\$_}\\n" for sort keys %\$md5;
print "ONE ", md5('$files[0]'), "\\n";
eval { md5('$d/none') }; print "MISSING \$@\\n";
eval { md5('$d') }; print "DIR \$@\\n";
BODY
my ( $status, $out ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', body => $body );
is( $status, 0, 'rex ran' ) or diag($out);
my %sha = $out =~ m/^(?:\e\[0m)?SHA256 (.*) ([0-9a-f]{64})$/mg;
my %md5 = $out =~ m/^(?:\e\[0m)?MD5 (.*) ([0-9a-f]{32})$/mg;
is( scalar keys %sha, scalar @files, 'a SHA-256 for every file' );
is( scalar keys %md5, scalar @files, 'an MD5 for every file' );
for my $f (@files) {
  open( my $fh, '<:raw', $f ) or die $!;
  my $bytes = do { local $/; <$fh> };
  is( $sha{$f}, Digest::SHA::sha256_hex($bytes), "sha256 of $f" );
  is( $md5{$f}, Digest::MD5::md5_hex($bytes),    "md5 of $f" );
}
like( $out, qr/ONE [0-9a-f]{32}$/m, 'md5 of one file' );
like( $out, qr/MISSING File not found: \Q$d\E\/none/, "a missing file: stock's message" );
like( $out, qr/DIR File not found: \Q$d\E/, 'a directory is not a file' );

done_testing;
